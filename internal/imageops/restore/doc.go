// Package restore is the built-in CPU photo-restoration operation of
// gengate ("photo-restoration"): blind noise estimation, colour denoising,
// JPEG deblocking, fade repair and colour balance where the photo measures
// as faded or cast, sharpening after deblocking or filling, and on request
// scratch filling with the inpainter, in pure Go. A photo that needs none
// of it comes back as it was.
//
// # API
//
//   - EstimateNoise: blind estimate of the Gaussian noise deviation.
//   - Denoise: colour BM3D for a known noise deviation.
//   - Restore / RestoreReport: the whole pipeline, with Options to skip steps
//     (DenoiseOnly for evaluation).
//   - DetectScratches: a hole mask of long thin line defects, which
//     Restore fills with package inpaint when Options.RemoveScratches is
//     set (the photo-restoration option removeScratches).
//   - Evaluate: the CBSD68 / Kodak24 evaluation table (imageops.Result),
//     with EvaluateHarm's do-no-harm rows (clean, noisy and faded photos).
//   - Fade and Fadings: the procedural faded-photo set.
//
// # Denoising: colour BM3D-lite
//
// Dabov, Foi, Katkovnik, Egiazarian, "Image denoising by sparse 3-D
// transform-domain collaborative filtering", IEEE TIP 16(8), 2007, and
// "Color image denoising via sparse 3D collaborative filtering with
// grouping constraint in luminance-chrominance space", ICIP 2007 (CBM3D);
// implementation details follow Lebrun, "An analysis and implementation of
// the BM3D image denoising method", IPOL 2012.
//
// RGB is turned into the orthonormal opponent space Y=(R+G+B)/√3,
// U=(R−B)/√2, V=(R−2G+B)/√6, so white noise keeps the same deviation in
// every channel. Both steps work on 8×8 blocks; block matching is done on Y
// only and the same groups are used for the three channels (the CBM3D
// grouping constraint). The 3-D transform is the orthonormal 2-D DCT of each
// block (fast even/odd 8-point DCT) followed by a 1-D Haar transform along
// the group (group sizes are powers of two).
//
//   - Step 1 (hard thresholding): reference blocks every 5 px, search
//     window 21×21 scanned from the centre outwards, up to 16 blocks whose
//     mean squared difference is under 2500 (5000 above sigma 40);
//     coefficients under 2.7 sigma are zeroed; blocks are aggregated with
//     a Kaiser window (beta 2) and weight 1/(non-zero coefficients).
//   - Step 2 (Wiener): matching on the basic estimate (every 4 px, window
//     17×17, threshold 400, 3500 above sigma 40), empirical Wiener shrinkage of the noisy
//     group's spectrum by |B|²/(|B|²+sigma²) of the basic estimate's
//     spectrum, aggregation weight 1/Σ W².
//
// Reference-block rows are shared out among GOMAXPROCS workers, each with
// its own aggregation buffers. The step sizes and windows are smaller than
// the reference (3 px, 39×39) to stay under 3 s per megapixel on two
// idle cores; on eight CBSD68 images this costs about 0.1 dB (29.54 against
// 29.63 dB with 3 px steps and a 25×25 window).
//
// # Noise estimate
//
// Immerkær, "Fast noise variance estimation", CVIU 64(2), 1996: the mask
// [1 −2 1; −2 4 −2; 1 −2 1] cancels locally linear structure and
// sigma = sqrt(π/2)/6 · mean|response|. It is computed per 16×16 block and
// per colour channel; the 20th percentile of the block estimates (times a
// factor 1.0797 that makes it unbiased on pure noise) is robust to texture
// and edges. Blocks with clipped pixels or whose mean is within two sigma of
// 0 or 255 are skipped, as clipping hides noise.
//
// # Restore pipeline
//
//  1. JPEG deblocking: an 8×8 grid is detected from the "excess step" at
//     each grid phase (jump minus the mean slope on either side), in both
//     directions; when present, borders are smoothed with an adaptive filter
//     in the spirit of the H.264 loop filter (List et al., "Adaptive
//     deblocking filter", IEEE TCSVT 13(7), 2003): only small steps between
//     smooth sides are treated as artefacts and spread as a linear ramp.
//  2. Blind noise estimate, then Denoise when sigma > 2.
//  3. Tone, measured first (tone.go), so that a good photo passes through:
//     the luma's black point (0.5th percentile) and range (to the 99.5th),
//     each channel's black point, and the colour cast three illuminant
//     estimators agree on (grey edge, grey world, white patch: per channel
//     the estimate nearest neutral when all three lie on the same side).
//  4. Fade repair, only when the photo measures as faded (black point ≥ 30,
//     range 24..190, every channel's black point ≥ 26, at most one channel's
//     white point ≥ 250 and the luma's 99.9th percentile under 245; after
//     denoising above σ 6 the thresholds move by half the σ above 6) and
//     its black floor is that of a print, not of haze or a pale scene
//     (floor.go: the detailed regions reach the black point and the
//     darkest regions' blacks have one colour, or the fade has a cast the
//     estimators agree on of 0.06 or more): per-channel levels
//     onto 10..246 with each channel's gain within 1/1.3..1.3 of the
//     luma's, then saturation × 1.2.
//  5. Colour balance by the grey-edge hypothesis (van de Weijer, Gevers,
//     Gijsenij, "Edge-based color constancy", IEEE TIP 16(9), 2007; first
//     order, Minkowski p=1 of the gradient magnitudes), gains limited to
//     0.8..1.25 per channel, then scaled together so that none is under
//     1 (the dimmed channels raised, none darkened) unless a channel's
//     white point would pass 255, only after
//     a fade repair (70 % of the correction) or when the agreed cast is at
//     least 0.12 from neutral, plus 0.002 per σ above 6 removed (all of
//     it).
//  6. Unsharp mask on luma (Gaussian sigma 1, gain 0.35, details under 2
//     levels ignored) only after deblocking or scratch filling: after
//     denoising it cost PSNR.
//
// CLAHE on luma (Zuiderveld, "Contrast limited adaptive histogram
// equalization", Graphics Gems IV, 1994) is kept for callers that ask for
// it (Options.CLAHEStrength); it no longer runs by default, as it lowered
// PSNR on faded photos after the levels and harmed good ones.
//
// The gates were set on the clean photos of Kodak24 and CBSD68 and on
// faded versions of Kodak24 made by Fade (Fadings); EvaluateHarm measures
// the result.
//
// Alpha is carried through unchanged.
//
// # Evaluation
//
// Evaluate reads the research-licensed sets in place (imageops.DataDir);
// nothing derived from them is committed. The documentation pictures
// (docs/builtin-quality/restore-*.png) come from a procedural scene.
package restore
