package gengate

import "testing"

// TestReviewTermBypasses: the spellings attackers used to slip a review
// term past a plain case-insensitive substring match are all held.
func TestReviewTermBypasses(t *testing.T) {
	s := &Service{ReviewTerms: []string{"forbidden", " Secret Plan "}}
	cases := []struct {
		prompt string
		want   string
	}{
		{"a forbidden fox", "forbidden"},
		{"a FORBIDDEN fox", "forbidden"},
		{"a forb\u200bidden fox", "forbidden"},               // zero-width space
		{"a for\u200d\u2060bid\u00adden fox", "forbidden"},   // joiner, word joiner, soft hyphen
		{"a f\u043erbidden fox", "forbidden"},                // Cyrillic о
		{"a fοrbіddеn fox", "forbidden"},                     // Greek ο, Cyrillic і and е
		{"a ｆｏｒｂｉｄｄｅｎ fox", "forbidden"},                     // fullwidth letters
		{"a f o r b i d d e n fox", "forbidden"},             // spaces between letters
		{"a f.o-r_b i\td\nd\u00a0e\u3000n fox", "forbidden"}, // punctuation and other separators
		{"a fórbiddén fox", "forbidden"},                     // accents
		{"a 𝐟𝐨𝐫𝐛𝐢𝐝𝐝𝐞𝐧 fox", "forbidden"},                     // mathematical bold
		{"ⓕⓞⓡⓑⓘⓓⓓⓔⓝ", "forbidden"},                           // circled
		{"a f\u1d0frbidden fox", "forbidden"},                // small capital ᴏ
		{"a forbidde\u0578 fox", "forbidden"},                // Armenian ո
		{"a f\u0585rbidden fox", "forbidden"},                // Armenian օ
		{"a FORBIDDEN fox, in Cherokee \u13a0", "forbidden"}, // case still folds
		{"a f\u03bfrbi\u0501\u0501en fox", "forbidden"},      // Greek ο, Cyrillic ԁ
		{"our secret-plan", " Secret Plan "},
		{"a fox in the forest", ""},
		{"for bidding", ""}, // "forbidding" is not "forbidden"
	}
	for _, tc := range cases {
		if got := s.reviewTerm(tc.prompt); got != tc.want {
			t.Errorf("reviewTerm(%q) = %q, want %q", tc.prompt, got, tc.want)
		}
	}
	// A term spelled with look-alikes matches the plain spelling too.
	s.ReviewTerms = []string{"ｆоrbidden"}
	if got := s.reviewTerm("forbidden"); got == "" {
		t.Error("a term with look-alike letters does not match its plain spelling")
	}
	// A term that folds to nothing matches nothing.
	s.ReviewTerms = []string{"\u200b", "--"}
	if got := s.reviewTerm("a -- b"); got != "" {
		t.Errorf("empty folded term matched: %q", got)
	}
}
