package imageops

// neighbour offsets, the 4 straight ones first
var (
	nbrDX = [8]int{-1, 1, 0, 0, -1, 1, -1, 1}
	nbrDY = [8]int{0, 0, -1, 1, -1, -1, 1, 1}
)

// Components labels the connected regions of the pixels of m (w×h,
// row-major) equal to val: 8-connected for true, 4-connected for false, so
// that a region and its complement never cross each other's diagonals.
// lab is each pixel's region (-1 for the other pixels), sizes the pixel
// count of each region, touches whether it reaches the image border.
func Components(m []bool, w, h int, val bool) (lab []int32, sizes []int, touches []bool) {
	lab = make([]int32, w*h)
	for i := range lab {
		lab[i] = -1
	}
	nbrs := 8
	if !val {
		nbrs = 4
	}
	stack := make([]int32, 0, 1024)
	for s := range m {
		if m[s] != val || lab[s] >= 0 {
			continue
		}
		id := int32(len(sizes))
		sizes = append(sizes, 0)
		touches = append(touches, false)
		lab[s] = id
		stack = append(stack[:0], int32(s))
		for len(stack) > 0 {
			i := int(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			sizes[id]++
			x, y := i%w, i/w
			if x == 0 || y == 0 || x == w-1 || y == h-1 {
				touches[id] = true
			}
			for k := 0; k < nbrs; k++ {
				nx, ny := x+nbrDX[k], y+nbrDY[k]
				if nx < 0 || ny < 0 || nx >= w || ny >= h {
					continue
				}
				j := ny*w + nx
				if m[j] == val && lab[j] < 0 {
					lab[j] = id
					stack = append(stack, int32(j))
				}
			}
		}
	}
	return lab, sizes, touches
}
