//go:build !amd64 || purego

package embed

// axpy sets y += a·x (len(x) >= len(y)).
func axpy(y, x []float32, a float32) { axpyGo(y, x, a) }

// useFMA is false: no packed matrices, no tiled kernel.
const useFMA = false

// matmulPacked is never called without the tiled kernel.
func matmulPacked(dst, x, packed []float32, L, in, out int) {
	panic("embed: matmulPacked without a tiled kernel")
}
