

// expected-error @+1 {{parameter 'qkv' fuse dimension 1 is out of range for 'tensor<24xf32>'}}
func.func @arg_fuse_dim(tensor<24xf32> {tfm.param = #tfm.param<name = "qkv", mapping = fuse, sources = ["q", "k"], dim = 0>}) { return }

