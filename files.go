package gengate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// Uploads and chaining.
//
// A file an account uploads (POST /api/v1/files) and a task's output are
// both served at /files/<token>.<ext>, and either URL can be given as an
// input of a later request. Such a URL is not fetched over the network: its
// token names the file in storage, which is read directly (so the server's
// own address needs no --allow-private-inputs), checked like any fetched
// input, and only for the account the file belongs to. A URL whose token is
// not one of this server's files is fetched like any other URL.

// DefaultUploadRetention is how long an uploaded file is kept: long enough
// for the requests that use it, short enough not to become storage.
const DefaultUploadRetention = 24 * time.Hour

// InputForbidden is the field code of an input URL that names a gengate
// file of another account.
const InputForbidden = "INPUT_FORBIDDEN"

// Upload is a file an account sent to be used as an input.
type Upload struct {
	ID          string
	AccountID   string
	Key         string // blob key
	Token       string // unguessable; the file's URL is /files/<token>.<ext>
	ContentType string
	Ext         string
	Size        int64
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// SHA256 is the hex SHA-256 of the file, set by Upload (not stored).
	SHA256 string
}

// Path is the upload's URL path.
func (u Upload) Path() string { return "/files/" + u.Token + "." + u.Ext }

func (s *Service) uploads() (UploadStore, error) {
	u, ok := s.Store.(UploadStore)
	if !ok {
		return nil, errors.New("the store does not keep uploads")
	}
	return u, nil
}

func (s *Service) checker() (InputChecker, error) {
	c, ok := s.Fetcher.(InputChecker)
	if !ok {
		return nil, errors.New("the fetcher cannot check uploaded files")
	}
	return c, nil
}

func (s *Service) uploadRetention() time.Duration {
	if s.UploadRetention > 0 {
		return s.UploadRetention
	}
	return DefaultUploadRetention
}

// UploadLimit is the largest upload accepted, in bytes: the larger of the
// image and video input limits.
func (s *Service) UploadLimit() int64 {
	c, err := s.checker()
	if err != nil {
		return 0
	}
	return max(c.MaxBytes(KindImage), c.MaxBytes(KindVideo))
}

// Upload streams a file from r into storage and checks it with the same
// checks as a fetched input (type by its bytes, size, pixels, decoding),
// never holding it whole: its type is named from its first bytes, the size
// limit of that type is enforced as the bytes pass, and an image is decoded
// from storage with its decode memory reserved (InputChecker.CheckFile).
// Refusals are *Error values: ETooLarge, EUnsupportedMedia or EInvalid,
// with one field error on "file" carrying the input code; nothing is left
// stored. An error of r itself is returned as it is.
func (s *Service) Upload(ctx context.Context, key *APIKey, r io.Reader) (*Upload, error) {
	store, err := s.uploads()
	if err != nil {
		return nil, err
	}
	check, err := s.checker()
	if err != nil {
		return nil, err
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	head = head[:n]
	if n == 0 {
		return nil, uploadError(Errorf(InputUndecodable, "the file is empty"))
	}
	ct := sniff(head)
	kind := KindImage
	if strings.HasPrefix(ct, "video/") {
		kind = KindVideo
	}
	limit := check.MaxBytes(kind)
	now := s.now()
	u := &Upload{ID: NewID(), AccountID: key.AccountID, Token: NewToken(), ContentType: ct, Ext: extOf(ct),
		CreatedAt: now, ExpiresAt: now.Add(s.uploadRetention())}
	u.Key = "uploads/" + u.ID + "." + u.Ext
	body := &capReader{r: io.MultiReader(bytes.NewReader(head), r), left: limit}
	sum := sha256.New()
	written, err := s.Blobs.PutStream(ctx, u.Key, io.TeeReader(body, sum), ct)
	if body.over {
		return nil, uploadError(Errorf(InputTooLarge, "the file is larger than the %d bytes allowed for an %s", limit, kind))
	}
	if err != nil {
		if body.err != nil {
			return nil, body.err // the client's body: the caller names it
		}
		return nil, fmt.Errorf("store upload: %w", err)
	}
	blobs := s.Blobs
	open := func(ctx context.Context) (io.ReadCloser, error) { return blobs.Open(ctx, u.Key) }
	in, err := check.CheckFile(ctx, open, written, kind)
	if err == nil && in.ContentType != ct {
		err = Errorf(InputNotSupported, "the file is not a PNG, JPEG, GIF or WebP image, nor an MP4 or WebM video")
	}
	if err != nil {
		err = uploadError(err)
	} else {
		u.Size, u.SHA256 = written, hex.EncodeToString(sum.Sum(nil))
		err = store.CreateUpload(ctx, u)
	}
	if err != nil {
		if derr := s.Blobs.Delete(context.WithoutCancel(ctx), u.Key); derr != nil {
			s.log().WarnContext(ctx, "delete upload", "key", u.Key, "err", derr)
		}
		return nil, err
	}
	s.log().InfoContext(ctx, "file uploaded", "uploadId", u.ID, "contentType", u.ContentType, "size", u.Size)
	return u, nil
}

// capReader reads r up to left bytes; past them it fails, with over set.
// err keeps r's own first error.
type capReader struct {
	r    io.Reader
	left int64
	over bool
	err  error
}

var errOverCap = errors.New("gengate: the file is over its size limit")

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		c.over = true
		return 0, errOverCap
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte past the limit tells "over" from "at"
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		c.over = true
		return 0, errOverCap
	}
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// DeleteUpload deletes an upload and its file now, before it expires.
func (s *Service) DeleteUpload(ctx context.Context, u *Upload) error {
	store, err := s.uploads()
	if err != nil {
		return err
	}
	if err := s.Blobs.Delete(ctx, u.Key); err != nil && ErrorCode(err) != ENotFound {
		return err
	}
	return store.DeleteUpload(ctx, u.ID)
}

// uploadError turns an input check's error into the upload's refusal.
func uploadError(err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Code == EOverloaded {
		return err
	}
	code := EInvalid
	switch e.Code {
	case InputTooLarge:
		code = ETooLarge
	case InputNotSupported:
		code = EUnsupportedMedia
	}
	return &Error{Code: code, Message: "file: " + e.Message,
		Fields: []FieldError{{Field: "file", Code: e.Code, Message: e.Message}}}
}

func extOf(contentType string) string {
	switch contentType {
	case "image/png":
		return "png"
	case "image/jpeg":
		return "jpg"
	case "image/webp":
		return "webp"
	case "image/gif":
		return "gif"
	case "video/mp4":
		return "mp4"
	case "video/webm":
		return "webm"
	}
	return "bin"
}

// FindFile returns the file served at /files/<token>: an output (a
// creation) or an unexpired upload, as a Creation (an upload has no
// TaskID).
func (s *Service) FindFile(ctx context.Context, token string) (*Creation, error) {
	c, err := s.Store.FindCreation(ctx, token)
	if ErrorCode(err) != ENotFound {
		return c, err
	}
	store, serr := s.uploads()
	if serr != nil {
		return nil, err
	}
	u, uerr := store.FindUpload(ctx, token, s.now())
	if uerr != nil {
		return nil, uerr
	}
	return &Creation{ID: u.ID, AccountID: u.AccountID, Key: u.Key, Token: u.Token, ContentType: u.ContentType,
		Ext: u.Ext, Size: u.Size, CreatedAt: u.CreatedAt}, nil
}

// fileToken returns the token and extension of a URL whose path ends in
// /files/<token>.<ext>, or false.
func fileToken(rawURL string) (token, ext string, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" {
		return "", "", false
	}
	dir, name, found := cutLast(u.Path, "/")
	if !found || !strings.HasSuffix(dir, "/files") && dir != "files" {
		return "", "", false
	}
	token, ext, found = strings.Cut(name, ".")
	return token, ext, found && token != "" && ext != ""
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// ownFile reads an input URL that names one of this server's files from
// storage and checks it as a fetched input is checked. found is false when
// the URL names no file here: it is then fetched like any URL. Another
// account's file is refused with InputForbidden.
func (s *Service) ownFile(ctx context.Context, accountID, rawURL string, kind InputKind) (in Input, found bool, err error) {
	token, ext, ok := fileToken(rawURL)
	if !ok {
		return Input{}, false, nil
	}
	c, err := s.FindFile(ctx, token)
	if ErrorCode(err) == ENotFound || err == nil && c.Ext != ext {
		return Input{}, false, nil
	}
	if err != nil {
		return Input{}, true, err
	}
	if c.AccountID != accountID {
		return Input{}, true, Errorf(InputForbidden,
			"input URL names a gengate file of another account; upload the file (POST /api/v1/files) to use it")
	}
	check, err := s.checker()
	if err != nil {
		return Input{}, true, err
	}
	// Refused by the record's size before a byte is read; then read by
	// handle, never whole.
	if c.Size > check.MaxBytes(kind) {
		return Input{}, true, Errorf(InputTooLarge, "input is larger than the %d bytes allowed", check.MaxBytes(kind))
	}
	size := c.Size
	if size <= 0 { // a record without its size: the store's
		f, err := s.Blobs.Open(ctx, c.Key)
		if ErrorCode(err) == ENotFound {
			return Input{}, true, Errorf(InputFetchFailed, "input URL names a gengate file that is no longer stored")
		}
		if err != nil {
			return Input{}, true, err
		}
		size = f.Size()
		f.Close()
	}
	blobs, key := s.Blobs, c.Key
	open := func(ctx context.Context) (io.ReadCloser, error) { return blobs.Open(ctx, key) }
	in, err = check.CheckFile(ctx, open, size, kind)
	if ErrorCode(err) == ENotFound {
		return Input{}, true, Errorf(InputFetchFailed, "input URL names a gengate file that is no longer stored")
	}
	if err != nil {
		return Input{}, true, err
	}
	in.Open, in.Size = open, size
	return in, true, nil
}

// fetchInput gets an input file: from storage when the URL names one of
// this server's files, otherwise through the Fetcher.
func (s *Service) fetchInput(ctx context.Context, accountID, rawURL string, kind InputKind) (Input, error) {
	if _, ok := s.Fetcher.(InputChecker); ok {
		if in, found, err := s.ownFile(ctx, accountID, rawURL, kind); found || err != nil {
			return in, err
		}
	}
	return s.Fetcher.Fetch(ctx, rawURL, kind)
}

// purgeUploads deletes uploads that expired before now, their files first.
func (s *Service) purgeUploads(ctx context.Context) (int, error) {
	store, err := s.uploads()
	if err != nil {
		return 0, nil // nothing to purge in a store without uploads
	}
	n := 0
	for {
		expired, err := store.ExpiredUploads(ctx, s.now(), 500)
		if err != nil || len(expired) == 0 {
			return n, err
		}
		for _, u := range expired {
			if err := s.Blobs.Delete(ctx, u.Key); err != nil && ErrorCode(err) != ENotFound {
				return n, err
			}
			if err := store.DeleteUpload(ctx, u.ID); err != nil {
				return n, err
			}
			n++
		}
	}
}
