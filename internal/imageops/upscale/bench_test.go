package upscale

import "testing"

// BenchmarkUpscale12MP: x2 from 2000x1500 to a 4000x3000 (12 MP) output.
func BenchmarkUpscale12MP(b *testing.B) {
	src := synthetic(2000, 1500, 1)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Upscale(src, 2); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(12*float64(b.N)/b.Elapsed().Seconds(), "MP/s")
}
