package lint

// Solana token programs: an asset's mint is owned by one of them, and the
// payee's associated token account is derived under it.
const (
	TokenProgram     = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	Token2022Program = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
)

// exactSVM: exact on Solana (scheme_exact_svm.md, PaymentRequirements for
// exact). extra.feePayer is required and must be a key; it MAY equal payTo
// (merchant-sponsored fees), so that is never flagged.
func (e *entryView) exactSVM() {
	e.extraAddress("feePayer", ruleAddressMissing)
	e.memo()
}

// memo: extra.memo, when present, is a string of at most 256 bytes.
func (e *entryView) memo() {
	v, present := e.extra["memo"]
	if !present {
		return
	}
	s, ok := v.(string)
	switch {
	case !ok:
		e.add(ruleSVMMemoNotString, "extra.memo")
	case len(s) > 256:
		e.add(ruleSVMMemoTooLong, "extra.memo")
	}
}
