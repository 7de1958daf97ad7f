// Package gengate is the domain of the gengate service: accounts and API keys,
// the credit ledger rules, tasks and their state machine, the model catalog
// with its price rules, idempotency, and the Service that ties them together.
//
// It imports only the standard library. Storage, HTTP, the queue of task
// steps and the engines that produce outputs live at the edge, in
// internal/..., and are wired together in cmd/gengate. The small interfaces
// the domain needs from them are Store, Blobs, Fetcher, Engine and
// Payments; what an adapter may do beyond them is listed in abilities.go.
package gengate
