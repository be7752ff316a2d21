// Causal attention of a Llama-3.1-8B layer (32 query heads, 8 KV heads,
// head dim 128) on packed QKV; bench/gpu_check.py times it forward and,
// with tfm-run --autodiff, forward + backward.
func.func @attention(%qkv: tensor<?x?x48x128xf32>) -> tensor<?x?x32x128xf32> {
  %o, %lse = tfm.flash_attention %qkv
      {num_q_heads = 32 : i64, num_kv_heads = 8 : i64, causal, scale = 0.08838834764831845 : f64}
      : (tensor<?x?x48x128xf32>) -> (tensor<?x?x32x128xf32>, tensor<?x32x?xf32>)
  return %o : tensor<?x?x32x128xf32>
}
