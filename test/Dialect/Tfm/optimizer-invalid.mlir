// Every optimizer-op verifier message, one case each.
// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @dynamic_param(%p: tensor<?x8xf32>, %m: tensor<?x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{param must have a static shape, got 'tensor<?x8xf32>'}}
  %a:3 = tfm.adamw_update %p, %p, %m, %m, %lr, %t, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
  return
}

// -----

func.func @grad_shape(%p: tensor<4x8xf32>, %g: tensor<8x4xf32>, %m: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{grad must have shape [4, 8]}}
  %a:3 = tfm.adamw_update %p, %g, %m, %m, %lr, %t, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @state_shape(%p: tensor<4x8xf32>, %m: tensor<4x4xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{exp_avg must have shape [4, 8]}}
  %a:3 = tfm.adamw_update %p, %p, %m, %m, %lr, %t, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @beta1_range(%p: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{beta1 must be in [0, 1), got 1}}
  %a:3 = tfm.adamw_update %p, %p, %p, %p, %lr, %t, %s {beta1 = 1.0 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @beta2_range(%p: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{beta2 must be in [0, 1), got -5.000000e-01}}
  %a:3 = tfm.adamw_update %p, %p, %p, %p, %lr, %t, %s {beta1 = 0.9 : f64, beta2 = -0.5 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @eps_positive(%p: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{eps must be positive, got 0}}
  %a:3 = tfm.adamw_update %p, %p, %p, %p, %lr, %t, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 0.0 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @decay_range(%p: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{weight_decay must be in [0, inf), got -1.000000e-02}}
  %a:3 = tfm.adamw_update %p, %p, %p, %p, %lr, %t, %s {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = -0.01 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @state_f32(%p: tensor<4x8xf32>, %m: tensor<4x8xf64>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{momentum_buffer must have element type 'f32'}}
  %a:2 = tfm.sgd_update %p, %p, %m, %lr, %t, %s {momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>
  return
}

// -----

func.func @state_float(%p: tensor<4x8xf32>, %m: tensor<4x8xbf16>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #2 must be ranked tensor of 32-bit float or 64-bit float values}}
  %a:2 = tfm.sgd_update %p, %p, %m, %lr, %t, %s {momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16>
  return
}

// -----

func.func @dampening_range(%p: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{dampening must be in [0, 1], got 1.5}}
  %a:2 = tfm.sgd_update %p, %p, %p, %lr, %t, %s {momentum = 0.9 : f64, dampening = 1.5 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @momentum_range(%p: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{momentum must be in [0, inf), got -1}}
  %a:2 = tfm.sgd_update %p, %p, %p, %lr, %t, %s {momentum = -1.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @nesterov(%p: tensor<4x8xf32>, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{nesterov needs momentum > 0 and dampening 0 (as torch.optim.SGD)}}
  %a:2 = tfm.sgd_update %p, %p, %p, %lr, %t, %s {momentum = 0.9 : f64, dampening = 0.1 : f64, weight_decay = 0.0 : f64, nesterov}
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @max_norm(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{max_norm must be finite and not negative (0: no clipping), got -1}}
  %n, %s = tfm.global_grad_norm %g {max_norm = -1.0 : f64} : tensor<4x8xf32>
  return
}

// -----

func.func @lr_type(%p: tensor<4x8xf32>, %lr: tensor<f32>, %t: tensor<i64>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #4 must be 0D tensor of 64-bit float values}}
  %a:3 = "tfm.adamw_update"(%p, %p, %p, %p, %lr, %t, %s) <{beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}>
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  return
}
