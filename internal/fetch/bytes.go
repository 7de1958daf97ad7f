package fetch

import (
	"context"

	"github.com/gengate/gengate"
)

var _ gengate.InputChecker = (*Fetcher)(nil)

// Check checks data already at hand (an upload, a file in storage) as an
// input of the kind, with the same size, type, pixel and decoding checks
// Fetch applies to a downloaded file.
func (f *Fetcher) Check(data []byte, kind gengate.InputKind) (gengate.Input, error) {
	limit := f.MaxBytes(kind)
	if limit == 0 {
		return gengate.Input{}, gengate.Errorf(gengate.InputNotSupported, "inputs of kind %q are not fetched", kind)
	}
	if int64(len(data)) > limit {
		return gengate.Input{}, gengate.Errorf(gengate.InputTooLarge, "input is larger than the %d bytes allowed", limit)
	}
	if kind == gengate.KindVideo {
		return checkVideo(data)
	}
	// The file is in memory already: only its decoding is reserved.
	return f.checkImage(context.Background(), data, int64(len(data)))
}

// MaxBytes is the largest input of the kind, in bytes; 0 for a kind that
// is not a file.
func (f *Fetcher) MaxBytes(kind gengate.InputKind) int64 {
	switch kind {
	case gengate.KindImage:
		return f.cfg.MaxBytes
	case gengate.KindVideo:
		return f.cfg.MaxVideoBytes
	}
	return 0
}
