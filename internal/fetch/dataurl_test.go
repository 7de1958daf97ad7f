package fetch

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/gengate/gengate"
)

func TestFetchDataURL(t *testing.T) {
	png := pngBytes(t, 16, 9)
	b64 := base64.StdEncoding.EncodeToString(png)
	// Line-wrapped base64, as some encoders emit it.
	var wrapped strings.Builder
	for s := b64; len(s) > 0; {
		n := min(len(s), 76)
		wrapped.WriteString(s[:n] + "\r\n")
		s = s[n:]
	}
	mp4 := mp4Bytes("isom")

	tests := []struct {
		name     string
		url      string
		kind     gengate.InputKind
		cfg      Config
		wantCode string
		want     []byte // the decoded bytes, when wantCode is ""
		wantType string
	}{
		{name: "base64 PNG", url: "data:image/png;base64," + b64, kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "no media type", url: "data:;base64," + b64, kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "wrong media type", url: "data:text/plain;base64," + b64, kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "media type parameters", url: "data:image/png;name=a.png;BASE64," + b64, kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "upper-case scheme", url: "DATA:image/png;base64," + b64, kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "no padding", url: "data:image/png;base64," + strings.TrimRight(b64, "="), kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "line-wrapped", url: "data:image/png;base64," + wrapped.String(), kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "percent-encoded base64", url: "data:image/png;base64," + url.QueryEscape(b64), kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "percent-encoded bytes", url: "data:image/png," + url.PathEscape(string(png)), kind: gengate.KindImage, want: png, wantType: "image/png"},
		{name: "exactly at MaxBytes", url: "data:image/png;base64," + b64, kind: gengate.KindImage, cfg: Config{MaxBytes: int64(len(png))}, want: png, wantType: "image/png"},
		{name: "MP4 video", url: "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(mp4), kind: gengate.KindVideo, want: mp4, wantType: "video/mp4"},

		{name: "text", url: "data:,Hello%2C%20World", kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "base64 text", url: "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("<svg xmlns='http://www.w3.org/2000/svg'/>")), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "empty", url: "data:,", kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "PNG as video", url: "data:video/mp4;base64," + b64, kind: gengate.KindVideo, wantCode: gengate.InputNotSupported},
		{name: "truncated PNG", url: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png[:len(png)-20]), kind: gengate.KindImage, wantCode: gengate.InputUndecodable},
		{name: "PNG claiming 10000x10000", url: "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngHeaderOnly(10000, 10000)), kind: gengate.KindImage, wantCode: gengate.InputTooLarge},

		{name: "bad base64", url: "data:image/png;base64,iVBO!!!!", kind: gengate.KindImage, wantCode: gengate.InputFetchFailed},
		{name: "padding inside base64", url: "data:image/png;base64,iV==BORw", kind: gengate.KindImage, wantCode: gengate.InputFetchFailed},
		{name: "impossible length", url: "data:image/png;base64,iVBOR", kind: gengate.KindImage, wantCode: gengate.InputFetchFailed},
		{name: "no comma", url: "data:image/png;base64", kind: gengate.KindImage, wantCode: gengate.InputFetchFailed},
		{name: "bad percent escape", url: "data:image/png,%zz", kind: gengate.KindImage, wantCode: gengate.InputFetchFailed},

		{name: "base64 over MaxBytes", url: "data:image/png;base64," + b64, kind: gengate.KindImage, cfg: Config{MaxBytes: int64(len(png)) - 1}, wantCode: gengate.InputTooLarge},
		{name: "percent-encoded over MaxBytes", url: "data:image/png," + url.PathEscape(string(png)), kind: gengate.KindImage, cfg: Config{MaxBytes: int64(len(png)) - 1}, wantCode: gengate.InputTooLarge},
		// Invalid base64 that would be too large: TOO_LARGE, not
		// FETCH_FAILED, shows the size is judged before decoding.
		{name: "oversize judged before decoding", url: "data:image/png;base64," + strings.Repeat("!", 200), kind: gengate.KindImage, cfg: Config{MaxBytes: 100}, wantCode: gengate.InputTooLarge},
		{name: "video over MaxVideoBytes", url: "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(mp4), kind: gengate.KindVideo, cfg: Config{MaxVideoBytes: int64(len(mp4)) - 1}, wantCode: gengate.InputTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := New(tt.cfg).Fetch(t.Context(), tt.url, tt.kind)
			wantCode(t, err, tt.wantCode)
			if tt.wantCode != "" {
				return
			}
			if in.ContentType != tt.wantType {
				t.Errorf("ContentType = %q, want %q", in.ContentType, tt.wantType)
			}
			if string(in.Data) != string(tt.want) {
				t.Errorf("got %d bytes, want the %d encoded", len(in.Data), len(tt.want))
			}
		})
	}
}
