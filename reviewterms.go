package gengate

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// foldForReview reduces text to the letters and digits a reader sees, so
// that review terms are matched however a prompt spells them:
//
//   - compatibility decomposition (NFKD, the decomposing half of NFKC):
//     fullwidth ａｂｃ, mathematical 𝐚𝐛𝐜, circled ⓐⓑⓒ and ligatures become
//     plain letters, and accents come apart from their letters;
//   - combining marks (the accents), and every character that is neither a
//     letter nor a digit, are dropped: zero-width and other invisible
//     characters, spaces and punctuation between letters ("b a d",
//     "b.a.d", "ba\u200bd" all read "bad");
//   - the common look-alikes of Latin letters in Cyrillic and Greek (and a
//     few Latin ones) are folded to the Latin letter they imitate
//     (confusables), then everything is lower-cased.
//
// Terms are folded the same way and matched as substrings of the folded
// prompt. docs/security.md says what this still cannot catch.
func foldForReview(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFKD.String(s) {
		if l, ok := confusables[r]; ok {
			r = l
		}
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // a combining mark: an accent, a joiner
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// confusables maps letters that look like Latin letters to the Latin
// letter, by their look in the case given (Cyrillic В looks like B, its
// lower case в does not look like b but folds there too: over-matching a
// review term only holds a prompt for an operator). After Unicode's
// confusables list (UTS #39), limited to the Cyrillic, Greek and Latin
// letters seen in practice.
var confusables = map[rune]rune{
	// Cyrillic
	'А': 'a', 'а': 'a', 'В': 'b', 'в': 'b', 'С': 'c', 'с': 'c', 'Е': 'e', 'е': 'e',
	'Ё': 'e', 'ё': 'e', 'Н': 'h', 'н': 'h', 'І': 'i', 'і': 'i', 'Ї': 'i', 'ї': 'i',
	'Ј': 'j', 'ј': 'j', 'К': 'k', 'к': 'k', 'М': 'm', 'м': 'm', 'О': 'o', 'о': 'o',
	'Р': 'p', 'р': 'p', 'Ѕ': 's', 'ѕ': 's', 'Т': 't', 'т': 't', 'Х': 'x', 'х': 'x',
	'У': 'y', 'у': 'y', 'Ү': 'y', 'ү': 'y', 'ԁ': 'd', 'Ԁ': 'd', 'ԛ': 'q', 'Ԛ': 'q',
	'ԝ': 'w', 'Ԝ': 'w', 'ӏ': 'l', 'Ӏ': 'l', 'ɡ': 'g', 'п': 'n', 'г': 'r', 'ь': 'b',
	'Ь': 'b', 'З': '3', 'з': '3', 'Ԍ': 'g', 'ԍ': 'g', 'һ': 'h', 'Һ': 'h',
	// Greek
	'Α': 'a', 'α': 'a', 'Β': 'b', 'β': 'b', 'Ε': 'e', 'ε': 'e', 'Ζ': 'z', 'Η': 'h',
	'η': 'n', 'Ι': 'i', 'ι': 'i', 'Κ': 'k', 'κ': 'k', 'Μ': 'm', 'Ν': 'n', 'ν': 'v',
	'Ο': 'o', 'ο': 'o', 'Ρ': 'p', 'ρ': 'p', 'Τ': 't', 'τ': 't', 'Υ': 'y', 'υ': 'u',
	'Χ': 'x', 'χ': 'x', 'γ': 'y', 'ω': 'w', 'μ': 'u', 'ϲ': 'c', 'Ϲ': 'c', 'ϳ': 'j',
	// Latin
	'ı': 'i', 'ȷ': 'j', 'ſ': 's', 'ɑ': 'a', 'ɩ': 'i', 'ʋ': 'u', 'ꞵ': 'b',
}

// reviewTerm returns the first review term the prompt contains once both
// are folded (foldForReview), or "".
func (s *Service) reviewTerm(prompt string) string {
	p := foldForReview(prompt)
	for _, term := range s.ReviewTerms {
		if t := foldForReview(term); t != "" && strings.Contains(p, t) {
			return term
		}
	}
	return ""
}
