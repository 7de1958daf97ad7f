package httpapi

// SetAfterHijack makes w's parked calls run f between their connection's
// hijack and their registration (TestParkedCountedAtShutdown).
func SetAfterHijack(w *Waiting, f func()) { w.afterHijack = f }

// OperationIDs returns the table of operation names, keyed by "METHOD /path".
func OperationIDs() map[string]string { return operationIDs }

// BrowserName is browserName, for TestBrowserName.
func BrowserName(ua string) string { return browserName(ua) }
