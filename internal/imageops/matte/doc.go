// Package matte is gengate's built-in automatic background removal
// ("remove-bg"): it cuts the main object out of a photo with no user hint,
// in pure Go on the CPU.
//
// RemoveBackground returns the image with alpha = foreground matte; Matte
// returns the matte alone. Evaluate runs the GrabCut-50 protocol.
//
// # Algorithm
//
//  1. The image is area-averaged to a working resolution (longest side 400
//     px) so that large photos stay fast.
//  2. Saliency: the minimum-barrier distance of every pixel to the image
//     border in CIE L*a*b* (Zhang et al., ICCV 2015) averaged with how
//     unlikely its colour is under a 5-component Gaussian mixture fitted to
//     a 4 % border frame, weighted by a mild centre prior. Its Otsu
//     threshold gives the initial foreground.
//  3. GrabCut-style iterations (Rother, Kolmogorov & Blake, SIGGRAPH 2004):
//     5-component full-covariance RGB GMMs for foreground and background,
//     unary -log likelihoods plus a soft saliency term, contrast-sensitive
//     8-connected pairwise terms (gamma 50, beta from the mean squared
//     neighbour difference), solved exactly by Boykov-Kolmogorov max-flow
//     (Boykov & Kolmogorov, PAMI 2004); then GMM re-estimation, up to 5
//     rounds. The border frame is only probable background: foreground
//     there pays a finite penalty, so objects cut by the image edge survive.
//  4. The largest connected foreground component is kept, with any
//     component at least 15 % of its size; small background holes are
//     filled.
//  5. The mask is upsampled and its edges refined by a guided filter (He,
//     Sun & Tang, ECCV 2010 / TPAMI 2013) with the grey image as guide,
//     applied only in a band around the boundary; above 1600 px the
//     filter's coefficients are computed at 1600 px and upsampled (He & Sun,
//     "Fast Guided Filter", 2015) before being applied at full resolution.
//
// Pixel-wise work (colour conversion, likelihoods, box filters, the final
// resampling) is split over all cores; the max-flow is sequential.
//
// Limits: with no hint the "object" is whatever is salient against the
// border, so scenes with several salient things (a person beside a bright
// sign) can select the wrong one, and objects whose colours recur in the
// background lose parts. Learned salient-object models (U2-Net, BiRefNet)
// do much better on cluttered scenes.
package matte
