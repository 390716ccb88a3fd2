-- The facilitator rail's settlements, so that every instance sharing the
-- database (and every restart) knows what a payload already went through:
-- one row per (op, payload key), the key being the SHA-256 of the decoded
-- payment payload. The payload itself is never stored. The lease (token,
-- end) says which presentation is at the facilitator; state says how far
-- the payload got: verifying (not sent to /settle), attempted (sent to
-- /settle, answer pending or lost), settled (tx and payer known; confirmed
-- once the chain showed the credit, with its fee), failed (start over).
CREATE TABLE settlements (
	op             TEXT NOT NULL CHECK (op IN ('check', 'memo', 'probe')),
	payload_key    TEXT NOT NULL CHECK (length(payload_key) = 64),
	state          TEXT NOT NULL CHECK (state IN ('verifying', 'attempted', 'settled', 'failed')),
	lease_token    TEXT,
	lease_until_ms BIGINT NOT NULL,
	tx             TEXT,
	payer          TEXT,
	confirmed      BOOLEAN NOT NULL,
	fee_lamports   TEXT NOT NULL,
	created_ms     BIGINT NOT NULL,
	PRIMARY KEY (op, payload_key),
	CHECK ((state = 'settled') = (tx IS NOT NULL AND payer IS NOT NULL))
);
