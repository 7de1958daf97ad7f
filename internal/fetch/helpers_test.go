package fetch

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/gen2brain/webp"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/gengate/gengate"
)

// wantCode fails t unless err is a *gengate.Error with the given code, or
// nil when code is "".
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	var ge *gengate.Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v (%T), want a *gengate.Error with code %s", err, err, code)
	}
	if ge.Code != code {
		t.Fatalf("code = %s (%q), want %s", ge.Code, ge.Message, code)
	}
	if ge.Message == "" {
		t.Fatalf("code %s has an empty message", ge.Code)
	}
}

// testImage returns a w x h image with some variation in it.
func testImage(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 13), uint8(x + y), 255})
		}
	}
	return m
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func webpBytes(t *testing.T, w, h int, lossless bool) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := webp.Encode(&b, testImage(w, h), webp.Options{Quality: 80, Lossless: lossless}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func bmpBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := bmp.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tiffBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tiff.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeaderOnly returns a PNG signature and a valid IHDR chunk claiming
// w x h 8-bit RGBA pixels, with no pixel data at all.
func pngHeaderOnly(w, h uint32) []byte {
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:4], w)
	binary.BigEndian.PutUint32(ihdr[4:8], h)
	ihdr[8] = 8 // bit depth
	ihdr[9] = 6 // colour type RGBA
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr[:]...)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// gifZeroSize returns a GIF whose logical screen is 0x0.
func gifZeroSize() []byte {
	return []byte("GIF89a\x00\x00\x00\x00\x00\x00\x00\x3b")
}

// mp4Bytes returns the start of an ISO media file with the given major
// brand: an ftyp box and a small mdat box.
func mp4Bytes(brand string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 24)
	b = append(b, "ftyp"+brand+"\x00\x00\x02\x00isommp41"...)
	b = binary.BigEndian.AppendUint32(b, 16)
	return append(b, "mdat01234567"...)
}

// webmBytes returns the start of a WebM file: an EBML header.
func webmBytes() []byte {
	return []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm")
}

// serve starts an httptest server for h, closed when the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// fakeDNS starts a DNS server on loopback that answers every A query with
// v4 and every AAAA query with v6 (either may be invalid for no answer) and
// returns a resolver that asks only it.
func fakeDNS(t *testing.T, v4, v6 netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], v4, v6); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", pc.LocalAddr().String())
		},
	}
}

// dnsAnswer builds the response to a one-question DNS query, or nil.
func dnsAnswer(q []byte, v4, v6 netip.Addr) []byte {
	if len(q) < 12 {
		return nil
	}
	i := 12
	for i < len(q) && q[i] != 0 {
		i += int(q[i]) + 1
	}
	end := i + 5 // the root label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1 : i+3])
	var rdata []byte
	switch {
	case qtype == 1 && v4.Is4():
		rdata = v4.AsSlice()
	case qtype == 28 && v6.Is6():
		rdata = v6.AsSlice()
	}
	r := append([]byte{}, q[0:2]...) // ID
	r = append(r, 0x81, 0x80)        // flags: response, RD, RA
	r = append(r, 0, 1, 0, 0, 0, 0)  // QDCOUNT 1, ANCOUNT 0, NSCOUNT 0
	r = append(r, 0, 0)              // ARCOUNT 0
	if rdata != nil {
		r[7] = 1 // ANCOUNT
	}
	r = append(r, q[12:end]...)
	if rdata != nil {
		r = append(r, 0xc0, 12) // name: pointer to the question
		r = binary.BigEndian.AppendUint16(r, qtype)
		r = append(r, 0, 1, 0, 0, 0, 60) // class IN, TTL 60
		r = binary.BigEndian.AppendUint16(r, uint16(len(rdata)))
		r = append(r, rdata...)
	}
	return r
}
