// Entry functions for entry-checks.test: what generated code assumes of its
// arguments (equal dynamic sizes, ids inside the table, labels inside the
// vocabulary or ignore_index), and entries that cannot be called at all.

func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tfm.add %a, %b : tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}

func.func @embed(%ids: tensor<?x?xi64>, %table: tensor<16x4xf32>) -> tensor<?x?x4xf32> {
  %h = tfm.embedding %ids, %table : (tensor<?x?xi64>, tensor<16x4xf32>) -> tensor<?x?x4xf32>
  return %h : tensor<?x?x4xf32>
}

func.func @loss(%logits: tensor<?x?x16xf32>, %labels: tensor<?x?xi64>) -> tensor<f32> {
  %l = tfm.cross_entropy %logits, %labels {ignore_index = -100 : i64} : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// Unfused attention materialises the scores [B, H, T, T]: T = 2^20 needs
// 4 TiB, from 4 MiB of inputs.
func.func @attention(%q: tensor<?x?x1x1xf32>, %k: tensor<?x?x1x1xf32>, %v: tensor<?x?x1x1xf32>) -> tensor<?x?x1x1xf32> {
  %a = tfm.attention %q, %k, %v {causal, scale = 1.0 : f64}
      : (tensor<?x?x1x1xf32>, tensor<?x?x1x1xf32>, tensor<?x?x1x1xf32>) -> tensor<?x?x1x1xf32>
  return %a : tensor<?x?x1x1xf32>
}

func.func @scalar(%x: f32) -> f32 {
  return %x : f32
}

func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

func.func private @declared(%x: tensor<4xf32>) -> tensor<4xf32>
