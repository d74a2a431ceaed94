//go:build amd64 && !purego

package embed

import "golang.org/x/sys/cpu"

// useFMA selects the AVX2/FMA3 kernel when the CPU has it.
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func axpyFMA(y, x []float32, a float32)

// axpy sets y += a·x (len(x) >= len(y)).
func axpy(y, x []float32, a float32) {
	if useFMA && len(y) >= 8 {
		_ = x[len(y)-1]
		axpyFMA(y, x, a)
		return
	}
	axpyGo(y, x, a)
}
