#include "textflag.h"

// func axpyFMA(y, x []float32, a float32)
// y[i] += a*x[i] for i < len(y), with AVX2 and FMA3.
TEXT ·axpyFMA(SB), NOSPLIT, $0-52
	MOVQ         y_base+0(FP), DI
	MOVQ         y_len+8(FP), CX
	MOVQ         x_base+24(FP), SI
	VBROADCASTSS a+48(FP), Y0

loop32:
	CMPQ        CX, $32
	JL          loop8
	VMOVUPS     (DI), Y1
	VMOVUPS     32(DI), Y2
	VMOVUPS     64(DI), Y3
	VMOVUPS     96(DI), Y4
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VFMADD231PS 64(SI), Y0, Y3
	VFMADD231PS 96(SI), Y0, Y4
	VMOVUPS     Y1, (DI)
	VMOVUPS     Y2, 32(DI)
	VMOVUPS     Y3, 64(DI)
	VMOVUPS     Y4, 96(DI)
	ADDQ        $128, DI
	ADDQ        $128, SI
	SUBQ        $32, CX
	JMP         loop32

loop8:
	CMPQ        CX, $8
	JL          tail
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, DI
	ADDQ        $32, SI
	SUBQ        $8, CX
	JMP         loop8

tail:
	CMPQ        CX, $0
	JE          done
	VMOVSS      (DI), X1
	VFMADD231SS (SI), X0, X1
	VMOVSS      X1, (DI)
	ADDQ        $4, DI
	ADDQ        $4, SI
	DECQ        CX
	JMP         tail

done:
	VZEROUPPER
	RET

// func gemm4x16(dst *float32, dstStride int, x *float32, xStride int, w *float32, wStride int, k int)
// For 4 rows of x (stride xStride floats) and a 16-column band of w (row
// stride wStride floats): dst[r][0:16] += sum_i x[r][i] * w[i][0:16], with
// dst rows dstStride floats apart. k >= 1.
TEXT ·gemm4x16(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), R10
	SHLQ $2, R10
	MOVQ x+16(FP), SI
	MOVQ xStride+24(FP), R8
	SHLQ $2, R8
	MOVQ w+32(FP), DX
	MOVQ wStride+40(FP), R9
	SHLQ $2, R9
	MOVQ k+48(FP), CX

	LEAQ (SI)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13

	MOVQ    DI, AX
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	ADDQ    R10, AX
	VMOVUPS (AX), Y2
	VMOVUPS 32(AX), Y3
	ADDQ    R10, AX
	VMOVUPS (AX), Y4
	VMOVUPS 32(AX), Y5
	ADDQ    R10, AX
	VMOVUPS (AX), Y6
	VMOVUPS 32(AX), Y7

gemmloop:
	VMOVUPS      (DX), Y8
	VMOVUPS      32(DX), Y9
	VBROADCASTSS (SI), Y10
	VBROADCASTSS (R11), Y11
	VBROADCASTSS (R12), Y12
	VBROADCASTSS (R13), Y13
	VFMADD231PS  Y8, Y10, Y0
	VFMADD231PS  Y9, Y10, Y1
	VFMADD231PS  Y8, Y11, Y2
	VFMADD231PS  Y9, Y11, Y3
	VFMADD231PS  Y8, Y12, Y4
	VFMADD231PS  Y9, Y12, Y5
	VFMADD231PS  Y8, Y13, Y6
	VFMADD231PS  Y9, Y13, Y7
	ADDQ         $4, SI
	ADDQ         $4, R11
	ADDQ         $4, R12
	ADDQ         $4, R13
	ADDQ         R9, DX
	DECQ         CX
	JNZ          gemmloop

	MOVQ    DI, AX
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, 32(AX)
	ADDQ    R10, AX
	VMOVUPS Y2, (AX)
	VMOVUPS Y3, 32(AX)
	ADDQ    R10, AX
	VMOVUPS Y4, (AX)
	VMOVUPS Y5, 32(AX)
	ADDQ    R10, AX
	VMOVUPS Y6, (AX)
	VMOVUPS Y7, 32(AX)
	VZEROUPPER
	RET
