package gengate

import (
	"errors"
	"fmt"
)

// Error codes are stable strings that clients switch on. The HTTP layer maps
// each one to a status (see internal/httpapi); docs/api.md lists them all.
const (
	EInvalid           = "INVALID_REQUEST"
	EUnsupportedOption = "UNSUPPORTED_MODEL_OPTION"
	EUnauthorized      = "UNAUTHORIZED"
	EInsufficient      = "INSUFFICIENT_CREDITS"
	ENotFound          = "NOT_FOUND"
	EMethodNotAllowed  = "METHOD_NOT_ALLOWED"
	ENeedsReview       = "GENERATION_NEEDS_REVIEW"
	EKeyInUse          = "IDEMPOTENCY_KEY_IN_USE"
	ETooLarge          = "PAYLOAD_TOO_LARGE"
	EUnsupportedMedia  = "UNSUPPORTED_MEDIA_TYPE"
	EKeyReused         = "IDEMPOTENCY_KEY_REUSED"
	ERateLimited       = "RATE_LIMITED"
	EFailed            = "GENERATION_FAILED"
	EInternal          = "INTERNAL"
	EConflict          = "CONFLICT"
	// EOverloaded refuses a request, before anything is charged, when the
	// work this process may have in flight (input decoding, CPU engine
	// jobs) is all taken: 503 with Retry-After.
	EOverloaded = "OVERLOADED"
	// EServerKey: a stored secret (a file URL token, a webhook signing
	// secret) is sealed under a server key this process was not given:
	// the operator must give it the install's key (docs/server-key.md).
	EServerKey = "SERVER_KEY_MISMATCH"
)

// Field codes describe one bad field inside an INVALID_REQUEST or
// UNSUPPORTED_MODEL_OPTION error.
const (
	FieldRequired     = "REQUIRED"
	FieldType         = "WRONG_TYPE"
	FieldValue        = "INVALID_VALUE"
	FieldUnknown      = "UNKNOWN_FIELD"
	FieldUnsupported  = "UNSUPPORTED"
	FieldTooLong      = "TOO_LONG"
	InputFetchFailed  = "INPUT_FETCH_FAILED"
	InputNotAllowed   = "INPUT_ADDRESS_NOT_ALLOWED"
	InputTooLarge     = "INPUT_TOO_LARGE"
	InputNotSupported = "INPUT_UNSUPPORTED_TYPE"
	InputUndecodable  = "INPUT_UNDECODABLE"
	// InputDecodeTooLarge: an image whose header says it would take more
	// memory to decode than one input may (bit depth and progressive JPEG
	// count, not only pixels).
	InputDecodeTooLarge = "INPUT_DECODE_TOO_LARGE"
)

// Error is an error a client may see. Message is safe to show; anything that
// is not an *Error is internal and its text never leaves the server.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	// Extra carries problem-body extension members such as jobId,
	// requiredCredits or remainingCredits.
	Extra map[string]any
}

// FieldError names one bad field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if len(e.Fields) > 0 {
		return fmt.Sprintf("%s: %s (%s: %s)", e.Code, e.Message, e.Fields[0].Field, e.Fields[0].Message)
	}
	return e.Code + ": " + e.Message
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EInternal for errors that carry none and
// "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the client-safe message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
