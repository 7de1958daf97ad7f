package gengate

import (
	"crypto/rand"
	"time"
)

// NewTaskID returns a task id: a UUID of version 7 (RFC 9562), whose first
// 48 bits are the Unix milliseconds of now and whose other 74 bits are
// random. Ids made later sort after earlier ones (to the millisecond), so a
// new task's entries go to the end of the store's indexes on the id (the
// task table's key, the ledger's task column) instead of to a random page
// of each: on SQLite a batch of creations then changes a few pages instead
// of two per task (docs/notes/sqlite-writer.md). The random part keeps an
// id as hard to guess as it needs to be: a task is only ever read with its
// account's credentials.
func NewTaskID(now time.Time) string {
	return newTimeID(now)
}

// NewCreationID returns an output's (a creation's) id, time-ordered like a
// task's: the finish that records it, on SQLite a write of the one writer,
// then adds to the end of the creations' key index instead of to a random
// page of it (docs/notes/end-to-end.md). Its URL token is NewFileToken's.
func NewCreationID(now time.Time) string {
	return newTimeID(now)
}

// newTimeID is a UUID of version 7 of now (NewTaskID).
func newTimeID(now time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		panic("gengate: crypto/rand failed: " + err.Error())
	}
	ms := uint64(now.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return uuidString(b)
}

// NewFileToken returns the URL token of an output file stored at now: 8
// base62 characters of its Unix milliseconds (fixed width, in the
// alphabet's ASCII order, so tokens sort by their time) and then 32 random
// base62 characters (NewToken: about 190 bits, which is what makes the URL
// unguessable; the time adds nothing to guess and takes nothing away). The
// finish that records the output, on SQLite a write of the one writer,
// then adds to the end of the tokens' unique index instead of to a random
// page of it (docs/notes/end-to-end.md).
func NewFileToken(now time.Time) string {
	var b [fileTokenPrefix]byte
	ms := uint64(max(now.UnixMilli(), 0))
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = base62[ms%62]
		ms /= 62
	}
	return string(b[:]) + NewToken()
}
