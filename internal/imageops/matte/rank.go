package matte

import (
	"math"
	"sort"
)

// rankValues returns the values of ranks k1 ≤ k2 (0-based) of v in
// ascending order, what v sorted would hold at those indices, in two
// passes of a radix select on the float32 bits instead of a sort. v is
// not changed. With a NaN in v it sorts a copy, as normalize did.
func rankValues(v []float32, k1, k2 int) (float32, float32) {
	var hist [1 << 16]int32
	for _, x := range v {
		if x != x {
			s := make([]float32, len(v))
			copy(s, v)
			sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
			return s[k1], s[k2]
		}
		hist[orderKey(x)>>16]++
	}
	b1, r1 := bucketOf(&hist, k1)
	b2, r2 := bucketOf(&hist, k2)
	clear(hist[:])
	var low2 [1 << 16]int32
	for _, x := range v {
		key := orderKey(x)
		if key>>16 == b1 {
			hist[key&0xffff]++
		}
		if key>>16 == b2 {
			low2[key&0xffff]++
		}
	}
	l1, _ := bucketOf(&hist, r1)
	l2, _ := bucketOf(&low2, r2)
	return keyValue(b1<<16 | l1), keyValue(b2<<16 | l2)
}

// orderKey maps a float32 to a uint32 in the same order (negative zero
// just below positive zero; they compare equal as values).
func orderKey(x float32) uint32 {
	b := math.Float32bits(x)
	if b&(1<<31) != 0 {
		return ^b
	}
	return b | 1<<31
}

func keyValue(k uint32) float32 {
	if k&(1<<31) != 0 {
		return math.Float32frombits(k &^ (1 << 31))
	}
	return math.Float32frombits(^k)
}

// bucketOf returns the bucket holding rank k of the histogram and the rank
// within that bucket.
func bucketOf(hist *[1 << 16]int32, k int) (uint32, int) {
	for b, c := range hist {
		if k < int(c) {
			return uint32(b), k
		}
		k -= int(c)
	}
	return 1<<16 - 1, 0
}
