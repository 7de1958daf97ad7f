package main

import (
	"log/slog"
	"slices"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
)

// inputURLSigning lets a local store send large inputs to fal and
// Replicate as gengate-signed URLs (gengate.SignInputURL) when there is a
// --public-url for them to fetch from, with the key kept beside the files
// (blob.Local.SigningKey). S3 presigns its own URLs and needs neither.
// A local store without --public-url keeps sending data: URIs, which the
// log says once if a provider that takes URLs is configured.
func inputURLSigning(svc *gengate.Service, blobs blob.Store, cfg *Config, providers []string, log *slog.Logger) error {
	local, ok := blobs.(*blob.Local)
	if !ok || cfg.InputURLMinBytes < 0 {
		return nil
	}
	if cfg.PublicURL == "" {
		if slices.Contains(providers, "fal") || slices.Contains(providers, "replicate") {
			log.Info("inputs go to fal and Replicate inline as data: URIs: with local storage, sending large ones by signed URL needs --public-url (an address the providers can reach)",
				"inputUrlMinBytes", cfg.InputURLMinBytes)
		}
		return nil
	}
	key, err := local.SigningKey()
	if err != nil {
		return err
	}
	svc.InputURLs.Base, svc.InputURLs.Key = cfg.PublicURL, key
	return nil
}
