// Package fetch is gengate's safe fetcher of input files: the images and
// videos a client names by URL in a generate request.
//
// Fetching a URL a client chose is dangerous in two ways, and this package
// exists to contain both.
//
// Server-side request forgery. A client could name http://127.0.0.1:6379/,
// http://10.0.0.5/admin or the cloud metadata endpoint
// http://169.254.169.254/ and have gengate reach, from inside our network,
// what the client cannot. Checking the host name before the request is not
// enough: the name may resolve to a private address, resolve differently a
// moment later (DNS rebinding), or redirect to one. So the check runs where
// the connection is made: a net.Dialer control function sees the exact IP
// address each socket is about to connect to, on every attempt and every
// redirect hop, and refuses loopback, private, link-local, CGNAT, multicast,
// reserved and similar ranges, in IPv4, IPv4-mapped IPv6, NAT64 and 6to4
// forms alike. Proxies from the environment are ignored, since a proxy would
// make the connection on our behalf and bypass the check. The operator can
// switch the check off (Config.AllowPrivate) for setups that fetch from a
// trusted local network.
//
// Resource exhaustion. A small file can claim a huge size: a 100 kB PNG may
// decode to a 40000x40000 canvas that needs gigabytes of memory (a
// decompression bomb), and a server may stream without end. So bodies are
// read through a limit, image headers are read and their pixel count checked
// before any pixels are decoded, and only then is the image decoded once to
// prove it is whole. Content types are sniffed from the bytes, never taken
// from headers, and only PNG, JPEG, GIF and WebP images and MP4/QuickTime and
// WebM/Matroska videos are accepted.
//
// data: URLs (RFC 2397) get the same size and type checks.
//
// Every error Fetch returns is a *gengate.Error with one of the input field
// codes (gengate.InputFetchFailed, InputNotAllowed, InputTooLarge,
// InputNotSupported, InputUndecodable) and a message safe to show a client.
package fetch
