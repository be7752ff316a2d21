/* Prints an HF config's parameter count through the C API. */
#include "tfm-c/Tfm.h"

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  char *error;
  tfmModel model = tfmImportHF(argv[1], &error);
  if (tfmModelIsNull(model)) {
    fprintf(stderr, "count-c: %s\n", error);
    tfmFree(error);
    return 1;
  }
  printf("C: %s %lld parameters\n", tfmModelArchitecture(model),
         (long long)tfmModelNumParameters(model));
  tfmModelDestroy(model);
  return 0;
}
