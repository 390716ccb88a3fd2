package lint

// uptoEVM: upto on EVM (scheme_upto_evm.md, 2. PaymentRequirements Schema):
// extra must carry name, version and facilitatorAddress.
func (e *entryView) uptoEVM() {
	for _, k := range []string{"name", "version"} {
		if s, ok := e.extra[k].(string); !ok || s == "" {
			e.add(ruleUptoExtraMissing, "extra."+k)
		}
	}
	e.extraAddress("facilitatorAddress", ruleUptoExtraMissing)
}

// uptoSVM: upto on Solana (scheme_upto_svm.md, 4.1 PaymentRequirements):
// extra carries feePayer, receiverAuthorizer, withdrawDelay (an integer > 0)
// and tokenProgram (Token or Token-2022); memo as for exact.
func (e *entryView) uptoSVM() {
	e.extraAddress("feePayer", ruleUptoExtraMissing)
	e.extraAddress("receiverAuthorizer", ruleUptoExtraMissing)
	if v, present := e.extra["withdrawDelay"]; !present {
		e.add(ruleUptoExtraMissing, "extra.withdrawDelay")
	} else if _, ok := positiveInt(v); !ok {
		e.add(ruleUptoWithdrawDelay, "extra.withdrawDelay")
	}
	if v, present := e.extra["tokenProgram"]; !present {
		e.add(ruleUptoExtraMissing, "extra.tokenProgram")
	} else if s, _ := v.(string); s != TokenProgram && s != Token2022Program {
		e.add(ruleUptoTokenProgramInvalid, "extra.tokenProgram")
	}
	e.memo()
}
