// Package buildinfo names this build of payability.
package buildinfo

// Version is payability's own version; it appears in the check and memo user agent.
const Version = "0.1.0"

// UserAgent is the user agent of check and memo fetches.
const UserAgent = "payability/" + Version
