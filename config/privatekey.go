package config

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
)

// minRSABits is the shortest RSA key accepted for private_key_jwt, the
// floor RFC 7518 section 3.3 sets for RS256 and PS256.
const minRSABits = 2048

// keyInfo is a parsed private key and what validation needs to know of it.
type keyInfo struct {
	signer crypto.Signer
	desc   string   // for messages: "an EC P-256 key"
	algs   []string // the signing algorithms it fits, the default first
}

// parsedKey is an Auth's PrivateKey parsed, with the PEM it came from: a
// copy of the Auth whose PrivateKey was changed since never uses it.
type parsedKey struct {
	pem  string
	info keyInfo
}

// parseKey parses PrivateKey once, when a decoder has just built the Auth
// (the file, a create or a patch), and keeps it for [Auth.Signer] and
// validation. A key that does not parse is kept as none: Validate says why.
func (a *Auth) parseKey() {
	a.key = nil
	if a.PrivateKey == "" {
		return
	}
	if info, err := parsePrivateKey(a.PrivateKey); err == nil {
		a.key = &parsedKey{pem: a.PrivateKey, info: info}
	}
}

// keyInfo returns PrivateKey parsed: the one parseKey kept if it is still
// this PrivateKey's, otherwise (an Auth built in Go, not decoded) parsed
// now.
func (a Auth) keyInfo() (keyInfo, *FieldError) {
	if a.key != nil && a.key.pem == a.PrivateKey {
		return a.key.info, nil
	}
	return parsePrivateKey(a.PrivateKey)
}

// Signer returns the parsed PrivateKey that signs client assertions
// (private_key_jwt): an *ecdsa.PrivateKey or an *rsa.PrivateKey. It is nil
// without a PrivateKey or when it does not parse (Validate says why). The
// key is parsed once, when the configuration is decoded; it is never
// serialized, and no view or log form of an Auth shows it.
func (a Auth) Signer() crypto.Signer {
	if a.PrivateKey == "" {
		return nil
	}
	k, err := a.keyInfo()
	if err != nil {
		return nil
	}
	return k.signer
}

// parsePrivateKey checks that s is one PEM block holding an unencrypted
// PKCS #8 private key of a supported type and size. Errors are on
// "auth.private_key" and never quote any part of s: every byte of it may be
// key material.
func parsePrivateKey(s string) (keyInfo, *FieldError) {
	bad := func(msg string) (keyInfo, *FieldError) { return keyInfo{}, fieldErr("auth.private_key", msg) }
	const use = "use an EC P-256 or P-384 key, or RSA of at least 2048 bits"
	if !strings.HasPrefix(strings.TrimSpace(s), "-----BEGIN ") {
		return bad(`must be a PEM-encoded PKCS #8 private key, starting with "-----BEGIN PRIVATE KEY-----"`)
	}
	block, rest := pem.Decode([]byte(s))
	switch {
	case block == nil:
		return bad("not a complete PEM block: check that the BEGIN and END lines are intact")
	case strings.TrimSpace(string(rest)) != "":
		return bad("must hold one PEM block and nothing else")
	case block.Type == "ENCRYPTED PRIVATE KEY" || len(block.Headers) > 0:
		return bad("must not be encrypted: mcpvisor has no passphrase to decrypt it (the configuration file is owner-only)")
	case block.Type == "EC PRIVATE KEY" || block.Type == "RSA PRIVATE KEY":
		// The type is one of two known strings, so naming it leaks nothing.
		return bad(fmt.Sprintf(`is a legacy %q PEM block: convert it to PKCS #8 ("PRIVATE KEY"), for example with openssl pkcs8 -topk8 -nocrypt`, block.Type))
	case block.Type != "PRIVATE KEY":
		return bad(`holds a PEM block of another type: want "PRIVATE KEY" (PKCS #8)`)
	}
	// The parser's error is dropped: ASN.1 errors may describe the content.
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return bad("not a valid PKCS #8 private key")
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return keyInfo{signer: k, desc: "an EC P-256 key", algs: []string{AlgES256}}, nil
		case elliptic.P384():
			return keyInfo{signer: k, desc: "an EC P-384 key", algs: []string{AlgES384}}, nil
		}
		return bad(fmt.Sprintf("an EC key on curve %s is not supported: %s", k.Curve.Params().Name, use))
	case *rsa.PrivateKey:
		if bits := k.N.BitLen(); bits < minRSABits {
			return bad(fmt.Sprintf("an RSA key of %d bits is too short: %s", bits, use))
		}
		return keyInfo{signer: k, desc: "an RSA key", algs: []string{AlgRS256, AlgPS256}}, nil
	case ed25519.PrivateKey:
		return bad("Ed25519 keys are not supported: " + use)
	}
	return bad("this key type cannot sign a client assertion: " + use)
}
