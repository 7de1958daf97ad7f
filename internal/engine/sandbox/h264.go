package sandbox

import (
	"bytes"
	"math/bits"
)

// This file is a deliberately tiny H.264 encoder (ITU-T H.264, Constrained
// Baseline profile, CAVLC). It never transforms or predicts anything: each
// macroblock is either I_PCM, its raw 4:2:0 samples, or, in P pictures,
// P_Skip, which with the zero motion vectors this stream always has copies
// the co-located macroblock of the previous picture. Decoding therefore
// reproduces the input samples exactly. Deblocking is switched off so that
// skipped macroblocks stay bit-exact copies.

// NAL unit types used by the encoder.
const (
	nalSlice = 1 // coded slice of a non-IDR picture
	nalIDR   = 5 // coded slice of an IDR picture
	nalSPS   = 7
	nalPPS   = 8
)

// Slice types (the "all slices of the picture have this type" variants).
const (
	sliceP = 5
	sliceI = 7
)

// Macroblock types.
const (
	mbTypeIPCMInI = 25     // I_PCM in an I slice
	mbTypeIPCMInP = 5 + 25 // I_PCM in a P slice (intra types follow the 5 P types)
)

const (
	h264Profile       = 66 // Baseline; with constraint_set1 it is Constrained Baseline
	h264Level         = 30 // 3.0: up to 1620 macroblocks a frame and 10 Mbit/s
	log2MaxFrameNum   = 4  // frame_num is 4 bits and wraps at 16
	maxFrameNum       = 1 << log2MaxFrameNum
	h264MaxRefFrames  = 1
	mbSize            = 16
	chromaMBSize      = mbSize / 2
	pcmBytesPerMB     = mbSize*mbSize + 2*chromaMBSize*chromaMBSize
	h264FrameRateMult = 2 // time_scale / num_units_in_tick = 2 × frame rate
)

// bitWriter collects the bits of a raw byte sequence payload (RBSP), most
// significant bit first.
type bitWriter struct {
	buf []byte
	cur byte // bits not yet flushed to buf
	n   uint // number of bits in cur
}

// u writes the n low bits of v (n ≤ 64).
func (w *bitWriter) u(n int, v uint64) {
	for i := n - 1; i >= 0; i-- {
		w.cur = w.cur<<1 | byte(v>>uint(i)&1)
		w.n++
		if w.n == 8 {
			w.buf = append(w.buf, w.cur)
			w.cur, w.n = 0, 0
		}
	}
}

// flag writes one bit.
func (w *bitWriter) flag(b bool) {
	if b {
		w.u(1, 1)
	} else {
		w.u(1, 0)
	}
}

// ue writes v as an unsigned Exp-Golomb code, ue(v).
func (w *bitWriter) ue(v uint32) {
	x := uint64(v) + 1
	n := bits.Len64(x)
	w.u(n-1, 0)
	w.u(n, x)
}

// se writes v as a signed Exp-Golomb code, se(v).
func (w *bitWriter) se(v int32) {
	if v > 0 {
		w.ue(uint32(2*int64(v) - 1))
	} else {
		w.ue(uint32(-2 * int64(v)))
	}
}

// alignZero writes zero bits up to the next byte boundary.
func (w *bitWriter) alignZero() {
	for w.n != 0 {
		w.u(1, 0)
	}
}

// bytes writes whole bytes; the writer must be byte aligned.
func (w *bitWriter) bytes(p []byte) {
	if w.n != 0 {
		panic("sandbox: unaligned bitWriter.bytes")
	}
	w.buf = append(w.buf, p...)
}

// trailing writes rbsp_trailing_bits and returns the finished RBSP.
func (w *bitWriter) trailing() []byte {
	w.u(1, 1)
	w.alignZero()
	return w.buf
}

// nalUnit wraps an RBSP in a NAL unit (without start code or length prefix),
// inserting emulation prevention bytes so that no 0x000000..0x000003 sequence
// appears in the payload.
func nalUnit(refIdc, typ byte, rbsp []byte) []byte {
	out := make([]byte, 0, len(rbsp)+len(rbsp)/64+2)
	out = append(out, refIdc<<5|typ)
	zeros := 0
	for _, b := range rbsp {
		if zeros >= 2 && b <= 3 {
			out = append(out, 3)
			zeros = 0
		}
		out = append(out, b)
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// yuvFrame is one picture in planar YUV 4:2:0 with 8-bit samples. The luma
// stride is W and the chroma stride W/2.
type yuvFrame struct {
	W, H      int
	Y, Cb, Cr []byte
}

// newYUVFrame returns a black (limited-range) w×h frame.
func newYUVFrame(w, h int) *yuvFrame {
	f := &yuvFrame{
		W: w, H: h,
		Y:  bytes.Repeat([]byte{16}, w*h),
		Cb: bytes.Repeat([]byte{128}, w*h/4),
		Cr: bytes.Repeat([]byte{128}, w*h/4),
	}
	return f
}

// crop returns the top-left w×h part of f as planar YUV 4:2:0 bytes (Y, then
// Cb, then Cr, each row by row), as a decoder outputs a cropped picture.
func (f *yuvFrame) crop(w, h int) []byte {
	out := make([]byte, 0, w*h*3/2)
	for y := 0; y < h; y++ {
		out = append(out, f.Y[y*f.W:y*f.W+w]...)
	}
	for _, p := range [][]byte{f.Cb, f.Cr} {
		for y := 0; y < h/2; y++ {
			out = append(out, p[y*f.W/2:y*f.W/2+w/2]...)
		}
	}
	return out
}

// codedSide rounds a picture side up to whole macroblocks.
func codedSide(v int) int { return (v + mbSize - 1) / mbSize * mbSize }

// h264Encoder turns a sequence of same-sized frames into H.264 NAL units.
// Its zero value is not usable; call newH264Encoder.
type h264Encoder struct {
	w, h     int // picture size in samples, even
	mbW, mbH int // coded size in macroblocks; the SPS crops it to w×h
	fps      int
	gop      int // an IDR picture every gop frames

	frames   int    // frames encoded so far
	frameNum uint32 // frame_num of the next picture
	idrID    uint32 // idr_pic_id of the last IDR picture
	prev     *yuvFrame
	mb       []byte // scratch for the current macroblock's PCM samples
	prevMB   []byte // scratch for the co-located macroblock of prev
}

// newH264Encoder returns an encoder for w×h pictures (even sides) at fps
// frames a second with an IDR picture every gop frames. Pictures are coded
// in whole macroblocks, and the SPS crops the padding off the right and
// bottom; Encode takes frames of the coded size (newFrame).
func newH264Encoder(w, h, fps, gop int) *h264Encoder {
	if gop < 1 {
		gop = 1
	}
	return &h264Encoder{
		w: w, h: h, mbW: codedSide(w) / mbSize, mbH: codedSide(h) / mbSize,
		fps: fps, gop: gop,
		mb:     make([]byte, pcmBytesPerMB),
		prevMB: make([]byte, pcmBytesPerMB),
	}
}

// newFrame returns a black frame of the encoder's coded size.
func (e *h264Encoder) newFrame() *yuvFrame { return newYUVFrame(e.mbW*mbSize, e.mbH*mbSize) }

// SPS returns the sequence parameter set NAL unit.
func (e *h264Encoder) SPS() []byte {
	var w bitWriter
	w.u(8, h264Profile)
	w.u(1, 1) // constraint_set0_flag: obeys Baseline
	w.u(1, 1) // constraint_set1_flag: obeys Main, so Constrained Baseline
	w.u(6, 0) // constraint_set2..5 and reserved_zero_2bits
	w.u(8, h264Level)
	w.ue(0)                   // seq_parameter_set_id
	w.ue(log2MaxFrameNum - 4) // log2_max_frame_num_minus4
	w.ue(2)                   // pic_order_cnt_type: output order is decoding order
	w.ue(h264MaxRefFrames)    // max_num_ref_frames
	w.flag(false)             // gaps_in_frame_num_value_allowed_flag
	w.ue(uint32(e.mbW - 1))   // pic_width_in_mbs_minus1
	w.ue(uint32(e.mbH - 1))   // pic_height_in_map_units_minus1
	w.flag(true)              // frame_mbs_only_flag
	w.flag(true)              // direct_8x8_inference_flag
	// Cropping offsets count 2-sample units in 4:2:0 frames.
	cropRight, cropBottom := uint32(e.mbW*mbSize-e.w)/2, uint32(e.mbH*mbSize-e.h)/2
	w.flag(cropRight > 0 || cropBottom > 0) // frame_cropping_flag
	if cropRight > 0 || cropBottom > 0 {
		w.ue(0)          // frame_crop_left_offset
		w.ue(cropRight)  // frame_crop_right_offset
		w.ue(0)          // frame_crop_top_offset
		w.ue(cropBottom) // frame_crop_bottom_offset
	}
	w.flag(true)                             // vui_parameters_present_flag
	w.flag(true)                             // aspect_ratio_info_present_flag
	w.u(8, 1)                                // aspect_ratio_idc: square samples
	w.flag(false)                            // overscan_info_present_flag
	w.flag(true)                             // video_signal_type_present_flag
	w.u(3, 5)                                // video_format: unspecified
	w.flag(false)                            // video_full_range_flag: limited range
	w.flag(true)                             // colour_description_present_flag
	w.u(8, 6)                                // colour_primaries: SMPTE 170M
	w.u(8, 6)                                // transfer_characteristics: SMPTE 170M
	w.u(8, 6)                                // matrix_coefficients: BT.601
	w.flag(false)                            // chroma_loc_info_present_flag
	w.flag(true)                             // timing_info_present_flag
	w.u(32, 1)                               // num_units_in_tick
	w.u(32, uint64(h264FrameRateMult*e.fps)) // time_scale
	w.flag(true)                             // fixed_frame_rate_flag
	w.flag(false)                            // nal_hrd_parameters_present_flag
	w.flag(false)                            // vcl_hrd_parameters_present_flag
	w.flag(false)                            // pic_struct_present_flag
	w.flag(true)                             // bitstream_restriction_flag
	w.flag(true)                             // motion_vectors_over_pic_boundaries_flag
	w.ue(0)                                  // max_bytes_per_pic_denom: no limit
	w.ue(0)                                  // max_bits_per_mb_denom: no limit
	w.ue(16)                                 // log2_max_mv_length_horizontal
	w.ue(16)                                 // log2_max_mv_length_vertical
	w.ue(0)                                  // max_num_reorder_frames
	w.ue(h264MaxRefFrames)                   // max_dec_frame_buffering
	return nalUnit(3, nalSPS, w.trailing())
}

// PPS returns the picture parameter set NAL unit.
func (e *h264Encoder) PPS() []byte {
	var w bitWriter
	w.ue(0)       // pic_parameter_set_id
	w.ue(0)       // seq_parameter_set_id
	w.flag(false) // entropy_coding_mode_flag: CAVLC
	w.flag(false) // bottom_field_pic_order_in_frame_present_flag
	w.ue(0)       // num_slice_groups_minus1
	w.ue(0)       // num_ref_idx_l0_default_active_minus1
	w.ue(0)       // num_ref_idx_l1_default_active_minus1
	w.flag(false) // weighted_pred_flag
	w.u(2, 0)     // weighted_bipred_idc
	w.se(0)       // pic_init_qp_minus26
	w.se(0)       // pic_init_qs_minus26
	w.se(0)       // chroma_qp_index_offset
	w.flag(true)  // deblocking_filter_control_present_flag
	w.flag(false) // constrained_intra_pred_flag
	w.flag(false) // redundant_pic_cnt_present_flag
	return nalUnit(3, nalPPS, w.trailing())
}

// Encode codes f as one picture of a single slice and returns its NAL unit
// and whether it is an IDR picture. Every gop-th picture is IDR and all its
// macroblocks are I_PCM; the others are P pictures in which macroblocks equal
// to the previous picture's are skipped.
func (e *h264Encoder) Encode(f *yuvFrame) (nal []byte, idr bool) {
	idr = e.prev == nil || e.frames%e.gop == 0
	if idr {
		e.frameNum = 0
		if e.frames > 0 {
			e.idrID = (e.idrID + 1) % 2 // consecutive IDR pictures need different ids
		}
	}

	var w bitWriter
	w.ue(0) // first_mb_in_slice
	if idr {
		w.ue(sliceI)
	} else {
		w.ue(sliceP)
	}
	w.ue(0) // pic_parameter_set_id
	w.u(log2MaxFrameNum, uint64(e.frameNum))
	if idr {
		w.ue(e.idrID)
	} else {
		w.flag(false) // num_ref_idx_active_override_flag
		w.flag(false) // ref_pic_list_modification_flag_l0
	}
	// dec_ref_pic_marking(): every picture is a reference picture.
	if idr {
		w.flag(false) // no_output_of_prior_pics_flag
		w.flag(false) // long_term_reference_flag
	} else {
		w.flag(false) // adaptive_ref_pic_marking_mode_flag: sliding window
	}
	w.se(0) // slice_qp_delta
	w.ue(1) // disable_deblocking_filter_idc: off

	skipRun := uint32(0)
	for my := 0; my < e.mbH; my++ {
		for mx := 0; mx < e.mbW; mx++ {
			pcm := e.macroblock(f, mx, my, e.mb)
			if idr {
				w.ue(mbTypeIPCMInI)
			} else {
				if bytes.Equal(pcm, e.macroblock(e.prev, mx, my, e.prevMB)) {
					skipRun++
					continue
				}
				w.ue(skipRun) // mb_skip_run
				skipRun = 0
				w.ue(mbTypeIPCMInP)
			}
			w.alignZero() // pcm_alignment_zero_bit
			w.bytes(pcm)
		}
	}
	if skipRun > 0 {
		w.ue(skipRun)
	}

	refIdc, typ := byte(2), byte(nalSlice)
	if idr {
		refIdc, typ = 3, nalIDR
	}
	nal = nalUnit(refIdc, typ, w.trailing())

	if e.prev == nil {
		e.prev = newYUVFrame(f.W, f.H)
	}
	copy(e.prev.Y, f.Y)
	copy(e.prev.Cb, f.Cb)
	copy(e.prev.Cr, f.Cr)
	e.frames++
	e.frameNum = (e.frameNum + 1) % maxFrameNum
	return nal, idr
}

// macroblock gathers the PCM samples of macroblock (mx, my) of f in
// bitstream order (16×16 luma, then 8×8 Cb, then 8×8 Cr, each row by row)
// into dst, reusing its storage.
func (e *h264Encoder) macroblock(f *yuvFrame, mx, my int, dst []byte) []byte {
	dst = dst[:0]
	for y := 0; y < mbSize; y++ {
		i := (my*mbSize+y)*f.W + mx*mbSize
		dst = append(dst, f.Y[i:i+mbSize]...)
	}
	cw := f.W / 2
	for y := 0; y < chromaMBSize; y++ {
		i := (my*chromaMBSize+y)*cw + mx*chromaMBSize
		dst = append(dst, f.Cb[i:i+chromaMBSize]...)
	}
	for y := 0; y < chromaMBSize; y++ {
		i := (my*chromaMBSize+y)*cw + mx*chromaMBSize
		dst = append(dst, f.Cr[i:i+chromaMBSize]...)
	}
	return dst
}
