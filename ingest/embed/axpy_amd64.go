//go:build amd64 && !purego

package embed

import "golang.org/x/sys/cpu"

// useFMA selects the AVX2/FMA3 kernels when the CPU has them.
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func axpyFMA(y, x []float32, a float32)

//go:noescape
func gemm4x16(dst *float32, dstStride int, x *float32, xStride int, w *float32, wStride int, k int)

// axpy sets y += a·x (len(x) >= len(y)).
func axpy(y, x []float32, a float32) {
	if useFMA && len(y) >= 8 {
		_ = x[len(y)-1]
		axpyFMA(y, x, a)
		return
	}
	axpyGo(y, x, a)
}

// matmulPacked adds x [L, in] · w to dst [L, out], w packed in 16-column
// bands (see newMatrix), in blocks of 4 rows through the register-tiled
// kernel. A last partial block is padded with zero rows.
func matmulPacked(dst, x, packed []float32, L, in, out int) {
	_ = dst[L*out-1]
	_ = x[L*in-1]
	_ = packed[in*out-1]
	full := L / 4 * 4
	for c := 0; c < out; c += 16 {
		band := &packed[c*in]
		for p := 0; p < full; p += 4 {
			gemm4x16(&dst[p*out+c], out, &x[p*in], in, band, 16, in)
		}
	}
	if rest := L - full; rest > 0 {
		xp := make([]float32, 4*in)
		dp := make([]float32, 4*out)
		copy(xp, x[full*in:L*in])
		copy(dp, dst[full*out:L*out])
		for c := 0; c < out; c += 16 {
			gemm4x16(&dp[c], out, &xp[0], in, &packed[c*in], 16, in)
		}
		copy(dst[full*out:L*out], dp[:rest*out])
	}
}
