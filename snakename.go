package gengate

import "strings"

// SnakeName spells an API field name ("lastFrameUrl") the way Replicate
// and fal spell their inputs ("last_frame_url"): the replicate engine sends
// an operator model's options under it, and the Replicate and fal facades
// read inputs by it.
func SnakeName(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
