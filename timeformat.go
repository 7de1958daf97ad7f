package gengate

import "time"

// TimeFormat is the one form of a time in every JSON answer and webhook
// payload: RFC 3339, in UTC, with milliseconds (2026-11-28T04:05:06.789Z).
// Times are stored to the millisecond, so nothing is lost; a fixed width
// sorts as text and parses everywhere (JavaScript's Date, Go's
// time.RFC3339, Python's datetime.fromisoformat).
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime is t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// JSONTime is a time that encodes in TimeFormat, for the structs answers
// encode as they are; with omitzero a zero time is left out.
type JSONTime struct{ time.Time }

// MarshalJSON encodes the time in TimeFormat.
func (t JSONTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + FormatTime(t.Time) + `"`), nil
}
