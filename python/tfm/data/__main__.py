"""python -m tfm.data prepare INPUT... --tokenizer DIR --output DIR
[--text-field NAME | --chat-field NAME] [--quiet]"""

import argparse
import sys

from . import DataError, prepare


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tfm.data")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="tokenize a corpus for tfm-train --data")
    p.add_argument("inputs", nargs="+",
                   help=".jsonl, .parquet, or plain text (documents separated by blank lines)")
    p.add_argument("--tokenizer", required=True,
                   help="a folder with the tokenizer (the checkpoint's own)")
    p.add_argument("--output", required=True, help="the prepared folder to create")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--text-field", help="the text of each record (default: text)")
    kind.add_argument("--chat-field",
                      help="each record's messages, rendered by the chat template; "
                           "only assistant tokens are targets")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        meta = prepare(args.inputs, args.tokenizer, args.output, text_field=args.text_field,
                       chat_field=args.chat_field, quiet=args.quiet)
    except DataError as e:
        print(f"tfm.data: error: {e}", file=sys.stderr)
        return 1
    print(f"{args.output}: {meta['documents']} documents, {meta['tokens']} tokens "
          f"({meta['dtype']}{', loss mask' if meta['loss_mask'] else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
