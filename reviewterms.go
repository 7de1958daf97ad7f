package gengate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// foldForReview reduces text to the letters and digits a reader sees, so
// that review terms are matched however a prompt spells them:
//
//   - compatibility decomposition (NFKD, the decomposing half of NFKC):
//     fullwidth ａｂｃ, mathematical 𝐚𝐛𝐜, circled ⓐⓑⓒ and ligatures become
//     plain letters, and accents come apart from their letters;
//   - each character is lower-cased and replaced by its confusables
//     skeleton (Unicode's UTS #39 data, confusables.txt, through
//     github.com/mtibben/confusables): small capital ᴏ, Armenian ո,
//     Cyrillic о, Greek ο, Cherokee Ꭺ and the thousands of other
//     look-alikes the table lists become the character they imitate; a
//     letter outside ASCII whose lower case has no entry is looked up as
//     written (Cyrillic В looks like B, its lower case в like ʙ), while
//     ASCII capitals are only lower-cased (the table reads I as l);
//   - combining marks (the accents), and every character that is neither
//     a letter nor a digit, are dropped: zero-width and other invisible
//     characters, spaces and punctuation between letters ("b a d",
//     "b.a.d", "ba\u200bd" all read "bad"); what is left is lower-cased.
//
// Terms are folded the same way and matched as substrings of the folded
// prompt. docs/security.md says what this still cannot catch.
func foldForReview(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue // a combining mark: an accent, a joiner
		}
		l := unicode.ToLower(r)
		sk := confusables.Skeleton(string(l))
		if sk == string(l) && l != r && r >= utf8.RuneSelf {
			sk = confusables.Skeleton(string(r))
		}
		for _, c := range sk {
			switch {
			case unicode.Is(unicode.Mn, c):
			case unicode.IsLetter(c) || unicode.IsDigit(c):
				b.WriteRune(unicode.ToLower(c))
			}
		}
	}
	return b.String()
}

// reviewTerm returns the first review term the prompt contains once both
// are folded (foldForReview), or "". With no terms (serve's default) the
// prompt is not folded: that fold was 2 % of a busy server's CPU.
func (s *Service) reviewTerm(prompt string) string {
	if len(s.ReviewTerms) == 0 {
		return ""
	}
	p := foldForReview(prompt)
	for _, term := range s.ReviewTerms {
		if t := foldForReview(term); t != "" && strings.Contains(p, t) {
			return term
		}
	}
	return ""
}
