package config

import "strings"

// maxEnvName bounds the length of a name [EnvShaped] accepts.
const maxEnvName = 64

// EnvShaped reports whether name looks like a real environment variable,
// so that the masked view, an error or the catalog's requires may show it.
// The rule is conservative: a name that might be a secret pasted inside
// braces ("${ghp_abc…}", "${sk_live_…}", "${AKIAIOSFODNN7EXAMPLE}") is
// never shown, never quoted in an error, and a value holding it is a
// secret of [Server.Secrets]; it still expands. A name is env-shaped when
// it is at most 64 bytes and either
//
//   - one of a short list of well-known lower- or mixed-case names
//     (wellKnownNames: http_proxy, https_proxy, no_proxy, Path,
//     SystemRoot, ProgramFiles, windir…), in any case, as Windows reads
//     them; or
//   - an upper-case ASCII letter or '_', then upper-case letters, digits
//     or '_' (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PATH2, OAUTH2_SCOPE),
//     and not shaped like a token (see tokenShaped): 16 bytes or more
//     with a digit and no '_'; a known access-key-id prefix (AKIA, ASIA…)
//     then 8 or more letters and digits; or a part between '_' that looks
//     generated ("A1B2C3", a hex run "DEADBEEF01", a mostly-digit run
//     "X20240101").
func EnvShaped(name string) bool {
	if name == "" || len(name) > maxEnvName {
		return false
	}
	if wellKnownName(name) {
		return true
	}
	if '0' <= name[0] && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return !tokenShaped(name)
}

// wellKnownNames are conventional variables that are not upper-case: the
// Unix proxy variables, which tools read in lower case first, and the
// Windows names as Windows spells them. Each is a plain word, never a
// pasted secret; the list is short and explicit so that no other lower-
// or mixed-case name passes.
var wellKnownNames = [...]string{
	"http_proxy", "https_proxy", "no_proxy", "ftp_proxy", "all_proxy",
	"Path", "PathExt", "SystemRoot", "SystemDrive", "windir", "ComSpec",
	"ProgramFiles", "ProgramData", "ProgramW6432", "CommonProgramFiles",
	"CommonProgramW6432", "AppData", "LocalAppData", "UserProfile",
	"HomeDrive", "HomePath", "Temp", "Tmp", "Public", "AllUsersProfile",
	"OneDrive", "UserName", "UserDomain", "ComputerName",
}

// wellKnownName reports whether name is one of wellKnownNames, in any
// case (Windows matches names case-insensitively: ${env:APPDATA} and
// ${env:AppData} are one variable).
func wellKnownName(name string) bool {
	for _, w := range wellKnownNames {
		if strings.EqualFold(name, w) {
			return true
		}
	}
	return false
}

// keyIDPrefixes begin access key ids that are upper-case letters and
// digits (AWS: AKIA long-term, ASIA temporary, and the other unique-id
// prefixes); a name beginning with one and then a run of letters and
// digits is such an id, not a variable.
var keyIDPrefixes = [...]string{"AKIA", "ASIA", "AIDA", "AROA", "AGPA", "ANPA", "ANVA", "APKA", "AIPA", "ABIA", "ACCA", "ASCA"}

// Lengths of the token shapes (see tokenShaped).
const (
	keyShapedLen    = 16 // a name with a digit and no '_' from this length
	keyIDRunLen     = 8  // letters and digits after a key-id prefix
	alternatingLen  = 6  // a part switching letters and digits 4 times
	hexRunLen       = 8  // a part of hex digits with a digit and a letter
	digitHeavyLen   = 8  // a part of at least half digits
	minAlternations = 4
)

// tokenShaped reports whether name, upper-case letters, digits and '_',
// looks like a generated key rather than a variable someone named: whole,
// 16 bytes or more with a digit and no '_', or a key-id prefix followed
// by a run of 8 or more letters and digits; or with a part between '_'
// that has a digit and a letter and either switches between letters and
// digits 4 times or more in 6 bytes or more ("A1B2C3"), or is 8 bytes or
// more of hex digits ("DEADBEEF01") or of at least half digits
// ("X20240101"). Names people write (OAUTH2, SHA256, ED25519, X509_CERT,
// AWS_S3_BUCKET, K8S_TOKEN, SECP256K1) pass.
func tokenShaped(name string) bool {
	if !strings.Contains(name, "_") && len(name) >= keyShapedLen && strings.ContainsAny(name, "0123456789") {
		return true
	}
	for _, p := range keyIDPrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && alnumRun(rest) >= keyIDRunLen {
			return true
		}
	}
	for part := range strings.SplitSeq(name, "_") {
		if generatedPart(part) {
			return true
		}
	}
	return false
}

// alnumRun is the length of the run of letters and digits s begins with.
func alnumRun(s string) int {
	n := strings.IndexByte(s, '_')
	if n < 0 {
		return len(s)
	}
	return n
}

// generatedPart reports whether part, upper-case letters and digits, has
// one of the generated shapes of tokenShaped.
func generatedPart(part string) bool {
	digits, switches, hex := 0, 0, true
	for i := 0; i < len(part); i++ {
		c := part[i]
		isDigit := '0' <= c && c <= '9'
		if isDigit {
			digits++
		}
		if i > 0 && isDigit != ('0' <= part[i-1] && part[i-1] <= '9') {
			switches++
		}
		hex = hex && (isDigit || 'A' <= c && c <= 'F')
	}
	if digits == 0 || digits == len(part) {
		return false
	}
	return len(part) >= alternatingLen && switches >= minAlternations ||
		len(part) >= hexRunLen && hex ||
		len(part) >= digitHeavyLen && 2*digits >= len(part)
}
