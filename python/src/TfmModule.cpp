//===- TfmModule.cpp - tfm._tfm: Python bindings of the C API -------------===//
//
// The native half of the Python package, over tfm-c/Tfm.h only (as MLIR's
// own Python bindings sit on its C API): one class per handle, errors as
// tfm.Error with the compiler's message, results as read-only numpy arrays
// that view the result's memory (zero-copy; the array keeps it alive).
// The pure-Python layer (tfm/__init__.py) gives the public API.
//
//===----------------------------------------------------------------------===//

#include "tfm-c/Tfm.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

/// What tfm.Error carries: the C API's message.
struct TfmError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Takes the C API's error string (throws when set).
struct ErrorSlot {
  char *message = nullptr;
  char **operator&() { return &message; }
  /// Throws the message when there is one; `failed` without one means the
  /// C API could not even allocate it.
  void check(bool failed) {
    if (message) {
      std::string text = message;
      tfmFree(message);
      message = nullptr;
      throw TfmError(text);
    }
    if (failed)
      throw std::bad_alloc();
  }
};

/// `s` for the C API, which takes NUL-terminated strings: one with a NUL
/// inside would silently name something else.
const char *cString(const std::string &s, const char *what) {
  if (s.find('\0') != std::string::npos)
    throw TfmError(std::string(what) + ": contains a NUL character");
  return s.c_str();
}

using Ids =
    nb::ndarray<const int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F32In = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using F32Out = nb::ndarray<nb::numpy, const float>;

/// A read-only numpy view of `data` that keeps `owner` alive.
F32Out view(const float *data, int64_t rank, const int64_t *shape,
            nb::handle owner) {
  std::vector<size_t> dims(shape, shape + rank);
  return F32Out(data, dims.size(), dims.data(), owner);
}

class Model {
public:
  explicit Model(const std::string &path) {
    ErrorSlot error;
    model = tfmImportHF(cString(path, "path"), &error);
    error.check(tfmModelIsNull(model));
  }
  ~Model() { tfmModelDestroy(model); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  int64_t numParameters() const { return tfmModelNumParameters(model); }
  std::string architecture() const { return tfmModelArchitecture(model); }
  std::string modelType() const { return tfmModelType(model); }
  int64_t vocabSize() const { return tfmModelVocabSize(model); }
  std::string summaryJson() const { return take(tfmModelSummaryJson(model)); }
  std::string mlir() const { return take(tfmModelMLIR(model)); }
  tfmModel get() const { return model; }

private:
  static std::string take(char *s) {
    if (!s)
      throw std::bad_alloc();
    std::string out = s;
    tfmFree(s);
    return out;
  }
  tfmModel model{nullptr};
};

class Result {
public:
  explicit Result(tfmResult r) : result(r) {}
  ~Result() { tfmResultDestroy(result); }
  Result(const Result &) = delete;
  Result &operator=(const Result &) = delete;

  std::optional<float> loss() const {
    if (!tfmResultHasLoss(result))
      return std::nullopt;
    return tfmResultLoss(result);
  }
  double stepMs() const { return tfmResultStepMs(result); }
  std::optional<F32Out> logits(nb::handle self) const {
    int64_t rank;
    const int64_t *shape;
    const float *data = tfmResultLogits(result, &rank, &shape);
    if (!data)
      return std::nullopt;
    return view(data, rank, shape, self);
  }
  std::vector<std::string> gradientNames() const {
    std::vector<std::string> names;
    for (int64_t i = 0, e = tfmResultNumGradients(result); i < e; ++i)
      names.push_back(tfmResultGradientName(result, i));
    return names;
  }
  F32Out gradient(nb::handle self, const std::string &name) const {
    int64_t rank;
    const int64_t *shape;
    const float *data =
        tfmResultGradientByName(result, name.c_str(), &rank, &shape);
    if (!data)
      throw nb::key_error(("no gradient named '" + name + "'").c_str());
    return view(data, rank, shape, self);
  }

private:
  tfmResult result;
};

/// Named tensors a step handed out (its parameters).
class Tensors {
public:
  explicit Tensors(tfmTensors t) : tensors(t) {}
  ~Tensors() { tfmTensorsDestroy(tensors); }
  Tensors(const Tensors &) = delete;
  Tensors &operator=(const Tensors &) = delete;

  std::vector<std::pair<std::string, F32Out>> items(nb::handle self) const {
    std::vector<std::pair<std::string, F32Out>> out;
    for (int64_t i = 0, e = tfmTensorsSize(tensors); i < e; ++i) {
      int64_t rank;
      const int64_t *shape;
      const float *data = tfmTensorsData(tensors, i, &rank, &shape);
      out.emplace_back(tfmTensorsName(tensors, i),
                       view(data, rank, shape, self));
    }
    return out;
  }

private:
  tfmTensors tensors;
};

class Step {
public:
  Step(const Model &model, const std::string &device, const std::string &dtype,
       bool fusion, bool gradients, bool logits, const std::string &recompute,
       const std::string &freeze, const std::string &moeAuxLoss,
       const std::string &lora, const std::string &adapter, int64_t loraSeed) {
    tfmStepOptions o;
    tfmStepOptionsInit(&o);
    o.device = device.c_str();
    o.dtype = dtype.c_str();
    o.fusion = fusion;
    o.gradients = gradients;
    o.logits = logits;
    o.recompute = recompute.c_str();
    o.freeze = freeze.c_str();
    o.moeAuxLoss = moeAuxLoss.c_str();
    // Empty: no LoRA, fresh adapters.
    o.lora = lora.empty() ? nullptr : lora.c_str();
    o.adapter = adapter.empty() ? nullptr : cString(adapter, "lora");
    o.loraSeed = loraSeed;
    ErrorSlot error;
    step = tfmCompile(model.get(), &o, &error);
    error.check(tfmStepIsNull(step));
  }
  ~Step() { tfmStepDestroy(step); }
  Step(const Step &) = delete;
  Step &operator=(const Step &) = delete;

  void bind(const std::string &dir) {
    const char *path = cString(dir, "checkpoint");
    ErrorSlot error;
    bool ok = exclusive([&] { return tfmStepBind(step, path, &error); });
    error.check(!ok);
  }

  void bindTensors(const std::vector<std::pair<std::string, F32In>> &named) {
    std::vector<std::vector<int64_t>> shapes(named.size());
    std::vector<tfmTensor> tensors(named.size());
    for (size_t i = 0; i < named.size(); ++i) {
      const F32In &a = named[i].second;
      for (size_t d = 0; d < a.ndim(); ++d)
        shapes[i].push_back(a.shape(d));
      tensors[i] = {named[i].first.c_str(), a.data(), int64_t(a.ndim()),
                    shapes[i].data()};
    }
    ErrorSlot error;
    bool ok = exclusive([&] {
      return tfmStepBindTensors(step, tensors.data(), tensors.size(), &error);
    });
    error.check(!ok);
  }

  Tensors *parameters() {
    ErrorSlot error;
    tfmTensors t = exclusive([&] { return tfmStepParameters(step, &error); });
    error.check(tfmTensorsIsNull(t));
    return new Tensors(t);
  }

  Result *run(Ids inputIds, std::optional<Ids> labels,
              std::optional<Ids> positionIds,
              std::optional<Ids> attentionMask) {
    auto check = [&](const char *name, const std::optional<Ids> &field) {
      if (field && (field->shape(0) != inputIds.shape(0) ||
                    field->shape(1) != inputIds.shape(1)))
        throw TfmError(
            std::string(name) + ": shape [" + std::to_string(field->shape(0)) +
            ", " + std::to_string(field->shape(1)) +
            "] differs from input_ids' [" + std::to_string(inputIds.shape(0)) +
            ", " + std::to_string(inputIds.shape(1)) + "]");
      return field ? field->data() : nullptr;
    };
    tfmTokenBatch tokens{int64_t(inputIds.shape(0)),
                         int64_t(inputIds.shape(1)),
                         inputIds.data(),
                         check("labels", labels),
                         check("position_ids", positionIds),
                         check("attention_mask", attentionMask)};
    ErrorSlot error;
    tfmResult r =
        exclusive([&] { return tfmStepRunBatch(step, &tokens, &error); });
    error.check(tfmResultIsNull(r));
    return new Result(r);
  }

private:
  /// Runs `call` without the GIL and holding the step's lock: the C
  /// handles are not thread-safe, so one call on a step at a time.
  template <typename Call> auto exclusive(Call call) -> decltype(call()) {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    return call();
  }

  tfmStep step{nullptr};
  std::mutex mutex;
};

/// tfm.train's callbacks, called from tfmTrain's thread with the GIL
/// taken: progress lines to Python (sys.stdout, visible in notebooks), each
/// update to the user's callback, and Ctrl-C (Python's SIGINT handler only
/// flags it while the update runs without the GIL) turned into a stop that
/// saves the update.
struct TrainCallbacks {
  nb::object onLine, onUpdate;
  /// The first exception a callback or a signal handler raised; the run
  /// stops (saved) and it is raised again.
  std::optional<nb::python_error> raised;

  /// No C++ exception may unwind into tfmTrain (built without them, it
  /// would skip releasing the output folder): one that is not Python's
  /// becomes a RuntimeError.
  void raiseInternal() {
    PyErr_SetString(PyExc_RuntimeError,
                    "tfm.train: a callback failed with a C++ exception");
    raised.emplace();
  }

  static void line(const char *text, void *self) {
    auto &cb = *static_cast<TrainCallbacks *>(self);
    nb::gil_scoped_acquire gil;
    if (cb.raised || cb.onLine.is_none())
      return;
    try {
      cb.onLine(text);
    } catch (nb::python_error &e) {
      cb.raised.emplace(std::move(e));
    } catch (...) {
      cb.raiseInternal();
    }
  }

  static bool update(const tfmUpdateLog *u, void *self) {
    auto &cb = *static_cast<TrainCallbacks *>(self);
    nb::gil_scoped_acquire gil;
    bool stop = false;
    if (!cb.raised && !cb.onUpdate.is_none()) {
      try {
        nb::dict log;
        log["step"] = u->step;
        log["steps"] = u->steps;
        log["loss"] = u->loss;
        log["grad_norm"] = u->gradNorm;
        log["lr"] = u->lr;
        log["tokens_per_s"] = u->tokensPerS;
        log["ms"] = u->ms;
        stop = nb::bool_(cb.onUpdate(log)).operator bool();
      } catch (nb::python_error &e) {
        cb.raised.emplace(std::move(e));
      } catch (...) {
        cb.raiseInternal();
      }
    }
    if (!cb.raised && PyErr_CheckSignals() != 0)
      cb.raised.emplace(); // KeyboardInterrupt, or a handler's exception
    return stop || cb.raised.has_value();
  }
};

/// tfm-train's options, by their Python names (tfm.train's keywords).
int64_t train(const std::string &checkpoint, const std::string &tokens,
              const std::string &outputDir, const nb::dict &options,
              bool progress, nb::object onLine, nb::object onUpdate) {
  tfmTrainOptions o;
  tfmTrainOptionsInit(&o);
  // Strings stay alive until tfmTrain returns.
  std::vector<std::string> strings;
  strings.reserve(options.size());
  for (auto item : options) {
    // Not a structured binding: the lambdas below capture `value` (C++17).
    nb::handle value = item.second;
    std::string k = nb::cast<std::string>(item.first);
    if (value.is_none())
      continue; // the option's default
    // Each option converts as Python would (an int for a count, a float
    // for a rate, a bool for a switch); anything else names the option.
    auto expect = [&](const char *type) {
      return TfmError(
          "train: option '" + k + "': expected " + type + ", got " +
          nb::cast<std::string>(nb::str(
              nb::handle(reinterpret_cast<PyObject *>(Py_TYPE(value.ptr()))))));
    };
    auto num = [&](int64_t &field) {
      if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
        throw expect("an int");
      field = nb::cast<int64_t>(value);
    };
    auto real = [&](double &field) {
      if (!PyFloat_Check(value.ptr()) && !PyLong_Check(value.ptr()))
        throw expect("a number");
      field = nb::cast<double>(value);
    };
    auto flag = [&](bool &field) {
      if (!PyBool_Check(value.ptr()))
        throw expect("a bool");
      field = nb::cast<bool>(value);
    };
    auto text = [&](const char *&field) {
      if (!PyUnicode_Check(value.ptr()))
        throw expect("a str");
      strings.push_back(nb::cast<std::string>(value));
      field = cString(strings.back(), k.c_str());
    };
    if (k == "steps")
      num(o.steps);
    else if (k == "batch")
      num(o.batch);
    else if (k == "seq")
      num(o.seq);
    else if (k == "grad_accum")
      num(o.gradAccum);
    else if (k == "warmup_steps")
      num(o.warmupSteps);
    else if (k == "save_every")
      num(o.saveEvery);
    else if (k == "log_every")
      num(o.logEvery);
    else if (k == "shuffle_seed")
      num(o.shuffleSeed);
    else if (k == "lora_seed")
      num(o.loraSeed);
    else if (k == "lora")
      text(o.lora);
    else if (k == "lora_init")
      text(o.loraInit);
    else if (k == "merge_lora")
      flag(o.mergeLora);
    else if (k == "packing")
      flag(o.packing);
    else if (k == "eval_data")
      text(o.evalData);
    else if (k == "eval_every")
      num(o.evalEvery);
    else if (k == "eval_batches")
      num(o.evalBatches);
    else if (k == "zero")
      num(o.zero);
    else if (k == "lr")
      real(o.lr);
    else if (k == "adam_beta1")
      real(o.beta1);
    else if (k == "adam_beta2")
      real(o.beta2);
    else if (k == "adam_eps")
      real(o.eps);
    else if (k == "weight_decay")
      real(o.weightDecay);
    else if (k == "momentum")
      real(o.momentum);
    else if (k == "max_grad_norm")
      real(o.maxGradNorm);
    else if (k == "nesterov")
      flag(o.nesterov);
    else if (k == "fusion")
      flag(o.fusion);
    else if (k == "resume")
      flag(o.resume);
    else if (k == "optimizer")
      text(o.optimizer);
    else if (k == "decay")
      text(o.decay);
    else if (k == "schedule")
      text(o.schedule);
    else if (k == "device")
      text(o.device);
    else if (k == "dtype")
      text(o.dtype);
    else if (k == "recompute")
      text(o.recompute);
    else if (k == "freeze")
      text(o.freeze);
    else if (k == "moe_aux_loss")
      text(o.moeAuxLoss);
    else if (k == "token_dtype")
      text(o.tokenDtype);
    else
      throw TfmError("train: unknown option '" + k + "'");
  }
  const char *ckpt = cString(checkpoint, "checkpoint");
  const char *data = cString(tokens, "tokens");
  const char *out = cString(outputDir, "output_dir");
  TrainCallbacks callbacks{std::move(onLine), std::move(onUpdate), {}};
  o.userData = &callbacks;
  if (!callbacks.onLine.is_none())
    o.onProgress = &TrainCallbacks::line;
  o.onUpdate = &TrainCallbacks::update;
  ErrorSlot error;
  int64_t steps;
  {
    nb::gil_scoped_release release;
    steps = tfmTrain(ckpt, data, out, &o, progress, &error);
  }
  if (callbacks.raised) {
    // Ctrl-C: KeyboardInterrupt, saying where the update was saved.
    if (callbacks.raised->matches(PyExc_KeyboardInterrupt) && error.message) {
      std::string text = error.message;
      tfmFree(error.message);
      error.message = nullptr;
      PyErr_SetString(PyExc_KeyboardInterrupt, text.c_str());
      throw nb::python_error();
    }
    // The callback's own exception, noting where the run was saved.
    if (error.message) {
      std::string text = error.message;
      tfmFree(error.message);
      error.message = nullptr;
      // Normalised first: before 3.12 a fetched value may still be the
      // exception's argument (a str), which takes no note.
      std::string note = "tfm.train: " + text;
      callbacks.raised->restore();
      callbacks.raised.reset();
      PyObject *type, *value, *traceback;
      PyErr_Fetch(&type, &value, &traceback);
      PyErr_NormalizeException(&type, &value, &traceback);
      if (PyObject *r =
              PyObject_CallMethod(value, "add_note", "s", note.c_str()))
        Py_DECREF(r);
      else
        PyErr_Clear(); // no add_note before Python 3.11
      PyErr_Restore(type, value, traceback);
      throw nb::python_error();
    }
    throw std::move(*callbacks.raised);
  }
  error.check(steps < 0);
  return steps;
}

} // namespace

NB_MODULE(_tfm, m) {
  m.doc() = "Native bindings of tfm's C API (use the `tfm` package).";
  nb::exception<TfmError>(m, "Error", PyExc_RuntimeError);
  m.attr("__version__") = tfmVersion();

  nb::class_<Model>(m, "Model")
      .def(nb::init<const std::string &>(), "path"_a,
           "Imports a config.json or a checkpoint folder holding one.")
      .def_prop_ro("num_parameters", &Model::numParameters)
      .def_prop_ro("architecture", &Model::architecture)
      .def_prop_ro("model_type", &Model::modelType)
      .def_prop_ro("vocab_size", &Model::vocabSize)
      .def("summary_json", &Model::summaryJson)
      .def("mlir", &Model::mlir);

  nb::class_<Result>(m, "Result")
      .def_prop_ro("loss", &Result::loss)
      .def_prop_ro("step_ms", &Result::stepMs)
      .def_prop_ro(
          "logits",
          [](nb::handle self) { return nb::cast<Result &>(self).logits(self); })
      .def("gradient_names", &Result::gradientNames)
      .def(
          "gradient",
          [](nb::handle self, const std::string &name) {
            return nb::cast<Result &>(self).gradient(self, name);
          },
          "name"_a);

  nb::class_<Tensors>(m, "Tensors").def("items", [](nb::handle self) {
    return nb::cast<Tensors &>(self).items(self);
  });

  nb::class_<Step>(m, "Step")
      .def(nb::init<const Model &, const std::string &, const std::string &,
                    bool, bool, bool, const std::string &, const std::string &,
                    const std::string &, const std::string &,
                    const std::string &, int64_t>(),
           "model"_a, "device"_a, "dtype"_a, "fusion"_a, "gradients"_a,
           "logits"_a, "recompute"_a, "freeze"_a, "moe_aux_loss"_a, "lora"_a,
           "adapter"_a, "lora_seed"_a, nb::keep_alive<1, 2>())
      .def("bind", &Step::bind, "checkpoint"_a)
      .def("bind_tensors", &Step::bindTensors, "tensors"_a)
      .def("parameters", &Step::parameters)
      .def("run", &Step::run, "input_ids"_a, "labels"_a = nb::none(),
           "position_ids"_a = nb::none(), "attention_mask"_a = nb::none());

  m.def("train", &train, "checkpoint"_a, "tokens"_a, "output_dir"_a,
        "options"_a, "progress"_a, "on_line"_a = nb::none(),
        "on_update"_a = nb::none());
}
