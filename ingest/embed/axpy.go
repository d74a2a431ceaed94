package embed

// axpyGo is the portable axpy: y += a·x (len(x) >= len(y)).
func axpyGo(y, x []float32, a float32) {
	x = x[:len(y)]
	i := 0
	for ; i+8 <= len(y); i += 8 {
		yy := y[i : i+8 : i+8]
		xx := x[i : i+8 : i+8]
		yy[0] += a * xx[0]
		yy[1] += a * xx[1]
		yy[2] += a * xx[2]
		yy[3] += a * xx[3]
		yy[4] += a * xx[4]
		yy[5] += a * xx[5]
		yy[6] += a * xx[6]
		yy[7] += a * xx[7]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}
