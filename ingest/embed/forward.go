package embed

import "math"

// forward embeds one token sequence: the USE-lite graph as described in
// EMBEDDINGS.md. It returns a unit-length vector of Dimensions floats.
func (w *weights) forward(ids []int32) []float32 {
	if len(ids) > maxTokens {
		ids = ids[:maxTokens]
	}
	L := len(ids)
	out := make([]float32, Dimensions)
	if L == 0 {
		return out
	}
	// Input: the graph adds the embedding to itself, then the timing signal.
	d := w.embDim
	half := len(w.invTime)
	x := make([]float32, L*d)
	for p, id := range ids {
		row := w.emb[int(id)*d : int(id)*d+d]
		xr := x[p*d : p*d+d]
		for k := range half {
			t := float64(p) * float64(w.invTime[k])
			xr[k] = 2*row[k] + float32(math.Sin(t))
			xr[half+k] = 2*row[half+k] + float32(math.Cos(t))
		}
	}
	h := w.layers[0].apply(x, L)
	h = w.layers[1].apply(h, L)

	mean := make([]float32, Dimensions)
	for p := range L {
		axpy(mean, h[p*Dimensions:(p+1)*Dimensions], 1)
	}
	inv := 1 / float32(L)
	for i := range mean {
		mean[i] *= inv
	}
	w.tanhW.mul(out, mean, w.tanhB, 1)
	var norm float64
	for i, v := range out {
		t := float32(math.Tanh(float64(v)))
		out[i] = t
		norm += float64(t) * float64(t)
	}
	if norm > 0 {
		s := float32(1 / math.Sqrt(norm))
		for i := range out {
			out[i] *= s
		}
	}
	return out
}

// apply runs one transformer layer over x [L, l.in] and returns [L, l.hid].
func (l *layer) apply(x []float32, L int) []float32 {
	hid := l.hid
	var h []float32
	if l.dense.w != nil {
		h = make([]float32, L*hid)
		l.dense.mul(h, x, l.denseB, L)
	} else {
		h = append([]float32(nil), x...)
	}
	// Self-attention on the normalised input.
	a := layerNorm(x, l.ln1S, l.ln1B, L, l.in)
	qkv := make([]float32, L*3*l.in)
	l.qkv.mul(qkv, a, l.qkvB, L)
	ctx := attention(qkv, L, l.in, l.heads, l.qScale)
	att := make([]float32, L*hid)
	l.out.mul(att, ctx, l.outB, L)
	for i := range h {
		h[i] += att[i]
	}
	// Feed-forward on the normalised result.
	f := layerNorm(h, l.ln2S, l.ln2B, L, hid)
	mid := make([]float32, L*len(l.ffn1B))
	l.ffn1.mul(mid, f, l.ffn1B, L)
	for i, v := range mid {
		if v < 0 {
			mid[i] = 0
		}
	}
	ff := make([]float32, L*hid)
	l.ffn2.mul(ff, mid, l.ffn2B, L)
	for i := range h {
		h[i] += ff[i]
	}
	return h
}

// layerNorm normalises each row of x [L, n] (eps 1e-6) with scale and bias.
func layerNorm(x, scale, bias []float32, L, n int) []float32 {
	out := make([]float32, len(x))
	for p := range L {
		row := x[p*n : (p+1)*n]
		var mean float64
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(n)
		var variance float64
		for _, v := range row {
			d := float64(v) - mean
			variance += d * d
		}
		variance /= float64(n)
		r := 1 / math.Sqrt(variance+1e-6)
		o := out[p*n : (p+1)*n]
		for i, v := range row {
			o[i] = float32((float64(v)-mean)*r)*scale[i] + bias[i]
		}
	}
	return out
}

// attention computes multi-head scaled dot-product self-attention from the
// fused projections qkv [L, 3*width] (q|k|v) and returns [L, width].
func attention(qkv []float32, L, width, heads int, scale float32) []float32 {
	hd := width / heads
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(hd)))
	}
	stride := 3 * width
	ctx := make([]float32, L*width)
	scores := make([]float32, L)
	for hh := range heads {
		off := hh * hd
		for i := range L {
			q := qkv[i*stride+off : i*stride+off+hd]
			maxS := float32(math.Inf(-1))
			for j := range L {
				k := qkv[j*stride+width+off : j*stride+width+off+hd]
				s := dot(q, k) * scale
				scores[j] = s
				if s > maxS {
					maxS = s
				}
			}
			var sum float32
			for j := range L {
				e := float32(math.Exp(float64(scores[j] - maxS)))
				scores[j] = e
				sum += e
			}
			c := ctx[i*width+off : i*width+off+hd]
			for j := range L {
				v := qkv[j*stride+2*width+off : j*stride+2*width+off+hd]
				axpy(c, v, scores[j]/sum)
			}
		}
	}
	return ctx
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// matmulBlock is how many rows of x share one pass over the weights in the
// portable path, so a weight row is read from memory once per block.
const matmulBlock = 4

// matrix is a weight matrix [in, out], row-major as TF stores it, plus the
// copy the tiled kernel reads: 16-column bands, each [in][16] contiguous,
// made once at load so the kernel streams memory instead of striding.
type matrix struct {
	w       []float32
	packed  []float32
	in, out int
}

func newMatrix(w []float32, in, out int) matrix {
	m := matrix{w: w, in: in, out: out}
	if useFMA && out%16 == 0 && len(w) == in*out {
		m.packed = make([]float32, len(w))
		for c := 0; c < out; c += 16 {
			band := m.packed[c*in : c*in+16*in]
			for i := range in {
				copy(band[i*16:i*16+16], w[i*out+c:i*out+c+16])
			}
		}
	}
	return m
}

// mul sets dst [L, out] = x [L, in] · m + b.
func (m matrix) mul(dst, x, b []float32, L int) {
	for p := range L {
		copy(dst[p*m.out:(p+1)*m.out], b)
	}
	if m.packed != nil {
		matmulPacked(dst, x, m.packed, L, m.in, m.out)
		return
	}
	matmulAccGo(dst, x, m.w, L, m.in, m.out)
}

// matmulAccGo adds x [L, in] · w [in, out] to dst [L, out] with axpy.
func matmulAccGo(dst, x, w []float32, L, in, out int) {
	for p0 := 0; p0 < L; p0 += matmulBlock {
		p1 := min(p0+matmulBlock, L)
		for i := range in {
			wr := w[i*out : (i+1)*out]
			for p := p0; p < p1; p++ {
				a := x[p*in+i]
				if a != 0 {
					axpy(dst[p*out:(p+1)*out], wr, a)
				}
			}
		}
	}
}
