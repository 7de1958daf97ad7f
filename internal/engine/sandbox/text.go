package sandbox

import (
	"image"
	"image/color"
	"image/draw"
	"strings"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Glyph metrics of basicfont.Face7x13, in unscaled pixels.
const (
	glyphW     = 7
	glyphH     = 13
	glyphAsc   = 11
	lineH      = 15 // glyph height plus spacing
	textPad    = 3  // panel padding around a text block
	ellipsis   = "..."
	noPrompt   = "(no prompt)"
	bannerText = "SANDBOX PLACEHOLDER - NOT AI OUTPUT"
)

// textBlock is a few lines of text drawn on a panel.
type textBlock struct {
	lines []string
	scale int        // nearest-neighbour magnification of the 7×13 font
	fg    color.RGBA // text colour
	bg    color.RGBA // panel colour, alpha-premultiplied; may be translucent
}

// size returns the block's size in destination pixels.
func (b textBlock) size() (w, h int) {
	longest := 0
	for _, l := range b.lines {
		longest = max(longest, len(l))
	}
	return (longest*glyphW + 2*textPad) * b.scale, (len(b.lines)*lineH + 2*textPad) * b.scale
}

// draw draws the block with its top-left corner at p. The text is rendered
// at the font's own size and magnified with nearest-neighbour sampling, so
// it stays crisp.
func (b textBlock) draw(dst draw.Image, p image.Point) {
	w, h := b.size()
	if w == 0 || len(b.lines) == 0 {
		return
	}
	small := image.NewRGBA(image.Rect(0, 0, w/b.scale, h/b.scale))
	draw.Draw(small, small.Bounds(), image.NewUniform(b.bg), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(b.fg), Face: basicfont.Face7x13}
	for i, l := range b.lines {
		d.Dot = fixed.P(textPad, textPad+glyphAsc+i*lineH+(lineH-glyphH)/2)
		d.DrawString(l)
	}
	xdraw.NearestNeighbor.Scale(dst, image.Rect(p.X, p.Y, p.X+w, p.Y+h), small, small.Bounds(), xdraw.Over, nil)
}

// printable replaces what the 7×13 font cannot draw with '?' and runs of
// white space with one space, so that one byte is one glyph.
func printable(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		case r < 0x20 || r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
		space = false
	}
	return strings.TrimSpace(b.String())
}

// wrap breaks s into lines of at most cols characters, at spaces where it
// can and inside words longer than a line. When more than maxLines lines
// would be needed, the last one kept ends in "...". maxLines ≤ 0 means no
// limit.
func wrap(s string, cols, maxLines int) []string {
	if cols < 1 {
		cols = 1
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(printable(s)) {
		for len(word) > 0 {
			switch {
			case line == "" && len(word) <= cols:
				line, word = word, ""
			case line != "" && len(line)+1+len(word) <= cols:
				line, word = line+" "+word, ""
			case line == "":
				line, word = word[:cols], word[cols:]
				lines = append(lines, line)
				line = ""
			default:
				lines = append(lines, line)
				line = ""
			}
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	if maxLines > 0 && len(lines) > maxLines {
		lines = lines[:maxLines]
		last := lines[maxLines-1]
		if len(last)+len(ellipsis) > cols {
			last = strings.TrimRight(last[:max(0, cols-len(ellipsis))], " ")
		}
		lines[maxLines-1] = last + ellipsis
	}
	return lines
}

// textScale picks the font magnification for a picture w pixels wide: 2× for
// ordinary sizes, 1× for tiny ones and more for very large ones.
func textScale(w int) int {
	switch {
	case w < 300:
		return 1
	case w < 1024:
		return 2
	default:
		return min(w/512, 8)
	}
}
