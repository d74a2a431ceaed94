//go:build !amd64 || purego

package embed

// axpy sets y += a·x (len(x) >= len(y)).
func axpy(y, x []float32, a float32) { axpyGo(y, x, a) }
