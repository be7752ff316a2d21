// Verifier messages of tfm.repeat, tfm.yield, #tfm.param and the tfm
// argument/module attributes.
// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @zero_layers(%h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{num_layers must be positive, got 0}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 0 : i64} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @result_types(%h: tensor<?x8xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{result types must match the carried (init) types}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x4xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x4xf32>
}

// -----

func.func @weight_layers(%h: tensor<?x8xf32>, %w: tensor<3x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{stacked weight #0 must have a leading dimension of num_layers = 2, got 'tensor<3x8xf32>'}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<3x8xf32>) {num_layers = 2 : i64} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @schedule_length(%h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{schedule has 3 entries, expected num_layers = 2}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64, schedule = array<i64: 0, 0, 0>} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @schedule_entry(%h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{schedule entry 1 is 1, but there are 1 layer kinds}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64, schedule = array<i64: 0, 1>} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @kinds_need_schedule(%h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{several layer kinds need a schedule}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }, {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @kind_names(%h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{kind_names has 2 entries for 1 layer kinds}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64, kind_names = ["a", "b"]} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @block_args(%h: tensor<?x8xf32>, %w: tensor<2x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{layer kind 0 block arguments must be the carried types then the per-layer weight types ('tensor<?x8xf32>', 'tensor<8xf32>')}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<2x8xf32>) {num_layers = 2 : i64} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<2x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @yield_types(%h: tensor<?x8xf32>, %h2: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    // expected-error @+1 {{yields types that differ from the carried types}}
    tfm.yield %h2 : tensor<?x4xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weight_kinds_count(%h: tensor<?x8xf32>, %w: tensor<2x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{weight_kinds has 2 entries for 1 stacked weights}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<2x8xf32>) {num_layers = 2 : i64, weight_kinds = [array<i64: 0>, array<i64: 0>]} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weight_kinds_empty(%h: tensor<?x8xf32>, %w: tensor<2x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{weight_kinds entry 0 covers no layer kind}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<2x8xf32>) {num_layers = 2 : i64, weight_kinds = [array<i64>]} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weight_kinds_order(%h: tensor<?x8xf32>, %w: tensor<2x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{weight_kinds entry 0 must list distinct layer kinds in [0, 2) in increasing order}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<2x8xf32>) {num_layers = 2 : i64, schedule = array<i64: 0, 1>, weight_kinds = [array<i64: 1, 0>]} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }, {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weight_kinds_unused(%h: tensor<?x8xf32>, %w: tensor<1x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{stacked weight #0 covers layer kinds that no layer runs}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<1x8xf32>) {num_layers = 2 : i64, schedule = array<i64: 0, 0>, weight_kinds = [array<i64: 1>]} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }, {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @weight_kinds_length(%h: tensor<?x8xf32>, %w: tensor<3x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{stacked weight #0 must have a leading dimension of 2, the number of layers of kinds [1], got 'tensor<3x8xf32>'}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<3x8xf32>) {num_layers = 3 : i64, schedule = array<i64: 1, 0, 1>, weight_kinds = [array<i64: 1>]} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }, {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

// A kind that does not read a weight takes no block argument for it.
func.func @weight_kinds_block_args(%h: tensor<?x8xf32>, %w: tensor<1x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{layer kind 0 block arguments must be the carried types then the per-layer weight types ('tensor<?x8xf32>')}}
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<1x8xf32>) {num_layers = 2 : i64, schedule = array<i64: 0, 1>, weight_kinds = [array<i64: 1>]} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }, {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @stacked_kinds_length(%h: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<2x8xf32>) {
  // expected-error @+1 {{stacked output #0 must have a leading dimension of 1, the number of layers of kinds [0], got 'tensor<2x8xf32>'}}
  %r:2 = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64, schedule = array<i64: 0, 1>, stacked_kinds = [array<i64: 0>]} -> tensor<?x8xf32>, tensor<2x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }, {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r#0, %r#1 : tensor<?x8xf32>, tensor<2x8xf32>
}

// -----

// Only the kinds a stacked output covers yield it.
func.func @stacked_kinds_yield(%h: tensor<?x8xf32>, %s: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<1x8xf32>) {
  %r:2 = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64, schedule = array<i64: 0, 1>, stacked_kinds = [array<i64: 1>]} -> tensor<?x8xf32>, tensor<1x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    // expected-error @+1 {{yields types that differ from the carried types and the per-layer stacked output types of its kind}}
    tfm.yield %x, %s : tensor<?x8xf32>, tensor<8xf32>
  }, {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x, %s : tensor<?x8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<?x8xf32>, tensor<1x8xf32>
}

// -----

func.func @yield_parent(%h: tensor<?x8xf32>) {
  // expected-error @+1 {{expects parent op 'tfm.repeat'}}
  tfm.yield %h : tensor<?x8xf32>
}

// -----

// expected-error @+1 {{parameter name must not be empty}}
func.func private @p0(tensor<8xf32> {tfm.param = #tfm.param<name = "">})

// -----

// expected-error @+1 {{stacked parameters need a '{layer}' placeholder in the name}}
func.func private @p1(tensor<2x8xf32> {tfm.param = #tfm.param<name = "model.norm.weight", stacked = true>})

// -----

// expected-error @+1 {{'{layer}' in the name of a parameter that is not stacked}}
func.func private @p2(tensor<8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.w">})

// -----

// expected-error @+1 {{parameter 'w': layers are only for stacked parameters}}
func.func private @p_layers_unstacked(tensor<8xf32> {tfm.param = #tfm.param<name = "w", layers = [1]>})

// -----

// expected-error @+1 {{parameter 'l.{layer}.w': layers must be distinct non-negative layer indices in increasing order}}
func.func private @p_layers_order(tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true, layers = [3, 1]>})

// -----

// expected-error @+1 {{stacked parameter 'l.{layer}.w' lists 1 layers but its leading dimension is 2}}
func.func @p_layers_count(%w: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true, layers = [1]>}) { return }

// -----

// expected-error @+1 {{sources and tied must be string arrays}}
func.func private @p3(tensor<8xf32> {tfm.param = #tfm.param<name = "w", tied = [1]>})

// -----

// expected-error @+1 {{direct sources are alternative names of the whole tensor and take no '{expert}'}}
func.func private @p4(tensor<8xf32> {tfm.param = #tfm.param<name = "w", sources = ["a.{expert}"]>})

// -----

// expected-error @+1 {{transpose mapping takes no sources (the name is the source)}}
func.func private @p4b(tensor<8xf32> {tfm.param = #tfm.param<name = "w", mapping = transpose, sources = ["a"]>})

// -----

// expected-error @+1 {{fuse mapping needs at least two sources}}
func.func private @p5(tensor<8xf32> {tfm.param = #tfm.param<name = "w", mapping = fuse, sources = ["a"]>})

// -----

// expected-error @+1 {{split mapping needs exactly one source}}
func.func private @p6(tensor<8xf32> {tfm.param = #tfm.param<name = "w", mapping = split, sources = ["a", "b"]>})

// -----

// expected-error @+1 {{stacked_experts needs per-expert source templates containing '{expert}', or one alternative name of the stacked tensor}}
func.func private @p7(tensor<8xf32> {tfm.param = #tfm.param<name = "w", mapping = stacked_experts, sources = ["a", "b.{expert}"]>})

// -----

// expected-error @+1 {{stacked_experts needs per-expert source templates}}
func.func private @p7b(tensor<8xf32> {tfm.param = #tfm.param<name = "w", mapping = stacked_experts>})

// -----

// expected-error @+1 {{dim and offset must be non-negative}}
func.func private @p8(tensor<8xf32> {tfm.param = #tfm.param<name = "w", mapping = split, sources = ["a"], dim = -1>})

// -----

// expected-error @+1 {{unknown tfm argument attribute 'tfm.weight'}}
func.func @arg_unknown(%w: tensor<8xf32> {tfm.weight = 1}) { return }

// -----

// expected-error @+1 {{'tfm.updated_in_place' must be a unit attribute}}
func.func @in_place_not_unit(%w: tensor<8xf32> {tfm.updated_in_place = true}) { return }

// -----

// expected-error @+1 {{'tfm.updated_in_place' on argument #0: expected a tensor or buffer argument}}
func.func @in_place_scalar(%s: f32 {tfm.updated_in_place}) { return }

// -----

// expected-error @+1 {{'tfm.param' must be a #tfm.param attribute}}
func.func @arg_not_param(%w: tensor<8xf32> {tfm.param = "model.norm.weight"}) { return }

// -----

// expected-error @+1 {{parameter 'w' (argument #0) must be a statically shaped tensor, got 'tensor<?xf32>'}}
func.func @arg_dynamic(%w: tensor<?xf32> {tfm.param = #tfm.param<name = "w">}) { return }

// -----

// expected-error @+1 {{stacked parameter 'l.{layer}.w' needs a leading layer dimension}}
func.func @arg_stacked_rank(%w: tensor<f32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true>}) { return }

// -----

// expected-error @+1 {{parameter 'qkv' fuse dimension 1 is out of range for 'tensor<24xf32>'}}
func.func @arg_fuse_dim(%w: tensor<24xf32> {tfm.param = #tfm.param<name = "qkv", mapping = fuse, sources = ["q", "k"], dim = 1>}) { return }

// -----

// expected-error @+1 {{parameter 'l.{layer}.a.lora_A.weight' expert_major needs an [experts, rows, columns] tensor per layer, got 'tensor<2x8x4xf32>'}}
func.func @arg_expert_major_rank(%w: tensor<2x8x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.a.lora_A.weight", mapping = expert_major, stacked = true>}) { return }

// -----

// expected-error @+1 {{rank_major mapping takes no sources (the name is the source)}}
func.func private @p_rank_major_sources(tensor<2x8x4xf32> {tfm.param = #tfm.param<name = "b", mapping = rank_major, sources = ["c"]>})

// -----

// expected-error @+1 {{'tfm.hf' must be a dictionary}}
module attributes {tfm.hf = "llama"} {}

// -----

// expected-error @+1 {{unknown tfm attribute 'tfm.model'}}
module attributes {tfm.model} {}

// -----

// Model dimensions are static: lowerings size buffers and index heads from
// them.
func.func @dynamic_features(%x: tensor<?x?x?xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{input dimension 2 must be static (model dimensions are static), got 'tensor<?x?x?xf32>'}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x?xf32>, tensor<8xf32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @dynamic_head_dim(%x: tensor<?x?x2x?xf32>, %p: tensor<?x?xi64>) {
  // expected-error @+1 {{input dimension 3 must be static (model dimensions are static)}}
  %y = tfm.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 8 : i64} : (tensor<?x?x2x?xf32>, tensor<?x?xi64>) -> tensor<?x?x2x?xf32>
  return
}

// -----

func.func @dynamic_qkv_heads(%qkv: tensor<?x?x?x4xf32>) {
  // expected-error @+1 {{qkv dimension 2 must be static (model dimensions are static)}}
  %o, %l = tfm.flash_attention %qkv {num_q_heads = 2 : i64, num_kv_heads = 1 : i64, causal, scale = 0.5 : f64} : (tensor<?x?x?x4xf32>) -> (tensor<?x?x2x4xf32>, tensor<?x2x?xf32>)
  return
}

// -----

func.func @matmul_vector(%x: tensor<4xf32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{input must have rank at least 2}}
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>} : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_dynamic_k(%x: tensor<?x?x?xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{input dimension 2 must be static (model dimensions are static)}}
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x?xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
  return
}

// -----

// Layer scans do not nest (autodiff of a nested scan used a freed value).
func.func @nested(%h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    // expected-error @+1 {{is nested in another tfm.repeat's layer body; layer scans do not nest}}
    %i = tfm.repeat (%x : tensor<?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x8xf32> {
    ^bb0(%y: tensor<?x8xf32>):
      tfm.yield %y : tensor<?x8xf32>
    }
    tfm.yield %i : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// -----

// A body whose entry block lacks the signature's argument (a fuzzer's
// finding): func.func's own verifier says so; the #tfm.param check, which
// runs first, must not read an argument that is not there.
// expected-error @+1 {{entry block must have 1 arguments to match function signature}}
func.func @param_without_entry_argument(tensor<24xf32> {tfm.param = #tfm.param<name = "w">}) { return }
