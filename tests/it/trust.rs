//! `[[trust]]` rules checking Sigstore bundles offline: a real keyless
//! bundle and a real managed-key bundle (public fixtures in
//! tests/data/sigstore, see SOURCE.md) against the public-good trusted root,
//! and key-signed bundles made here.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::Digest as _;
use toolhost::trust::{Evidence, SigningKey, TrustRuleConfig};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sigstore")
}

fn digest_of(bytes: &[u8]) -> String {
    let hash = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

fn bundle(file: &str) -> Vec<Evidence> {
    vec![Evidence::Bundle {
        json: std::fs::read(fixtures().join(file)).unwrap(),
        found_at: file.to_string(),
    }]
}

fn keyless(identity: Option<&str>, regexp: Option<&str>, issuer: &str) -> TrustRuleConfig {
    TrustRuleConfig {
        prefix: "ghcr.io/acme/".into(),
        identity: identity.map(str::to_string),
        identity_regexp: regexp.map(str::to_string),
        issuer: Some(issuer.into()),
        trusted_root: Some("trusted_root.json".into()),
        ..Default::default()
    }
}

const SIGNER: &str = "w.vollprecht@gmail.com";
const ISSUER: &str = "https://github.com/login/oauth";

#[test]
fn a_keyless_bundle_is_accepted_for_its_identity_only() {
    let artifact = std::fs::read(fixtures().join("cosign-v3-blob.txt")).unwrap();
    let digest = digest_of(&artifact);
    let evidence = bundle("cosign-v3-blob.sigstore.json");

    let rule = keyless(Some(SIGNER), None, ISSUER)
        .resolve(&fixtures())
        .unwrap();
    let verified = rule
        .verify(&digest, &evidence)
        .expect("the right identity verifies");
    assert!(
        verified.how.contains(SIGNER) && verified.how.contains("logged"),
        "{}",
        verified.how
    );

    let rule = keyless(None, Some(r"[a-z.]+@gmail\.com"), ISSUER)
        .resolve(&fixtures())
        .unwrap();
    assert!(rule.verify(&digest, &evidence).is_ok());

    for (identity, regexp, issuer) in [
        (Some("someone.else@example.com"), None, ISSUER),
        (None, Some(r"vollprecht@gmail\.com"), ISSUER), // must match the whole identity
        (Some(SIGNER), None, "https://accounts.google.com"),
    ] {
        let rule = keyless(identity, regexp, issuer)
            .resolve(&fixtures())
            .unwrap();
        let refused = rule.verify(&digest, &evidence).expect_err("refused");
        let text = refused.to_string();
        assert!(text.contains("cosign-v3-blob.sigstore.json"), "{text}");
        assert!(
            text.contains("identity") || text.contains("issuer") || text.contains("Issuer"),
            "{text}"
        );
    }

    // The same bundle for another digest.
    let rule = keyless(Some(SIGNER), None, ISSUER)
        .resolve(&fixtures())
        .unwrap();
    let other = digest_of(b"other bytes");
    let text = rule
        .verify(&other, &evidence)
        .expect_err("another digest")
        .to_string();
    assert!(text.contains("another digest"), "{text}");
}

#[test]
fn a_keyless_rule_must_name_its_identity_and_root() {
    let mut rule = keyless(None, None, ISSUER);
    assert!(
        rule.check()
            .unwrap_err()
            .contains("identity_regexp = \".*\"")
    );
    rule.identity_regexp = Some(".*".into());
    assert!(rule.check().is_ok());
    rule.trusted_root = None;
    assert!(rule.check().unwrap_err().contains("trusted_root"));
    let mut bad = keyless(Some(SIGNER), None, ISSUER);
    bad.trusted_root = Some("missing.json".into());
    assert!(
        bad.resolve(&fixtures())
            .unwrap_err()
            .contains("missing.json")
    );
}

#[test]
fn a_managed_key_bundle_is_checked_with_its_log_entry() {
    let artifact = std::fs::read(fixtures().join("managed-key-artifact.txt")).unwrap();
    let digest = digest_of(&artifact);
    let evidence = bundle("managed-key.sigstore.json");
    let rule = TrustRuleConfig {
        prefix: "ghcr.io/".into(),
        key: Some("managed-key.pub".into()),
        trusted_root: Some("trusted_root.json".into()),
        ..Default::default()
    }
    .resolve(&fixtures())
    .unwrap();
    let verified = rule.verify(&digest, &evidence).expect("verifies");
    assert!(
        verified.how.contains("managed-key.pub") && verified.how.contains("logged"),
        "{}",
        verified.how
    );

    let dir = tempfile::tempdir().unwrap();
    let other = SigningKey::generate().unwrap();
    std::fs::write(
        dir.path().join("other.pub"),
        other.public_key_pem().unwrap(),
    )
    .unwrap();
    std::fs::copy(
        fixtures().join("trusted_root.json"),
        dir.path().join("trusted_root.json"),
    )
    .unwrap();
    let rule = TrustRuleConfig {
        prefix: "ghcr.io/".into(),
        key: Some("other.pub".into()),
        trusted_root: Some("trusted_root.json".into()),
        ..Default::default()
    }
    .resolve(dir.path())
    .unwrap();
    let text = rule
        .verify(&digest, &evidence)
        .expect_err("another key")
        .to_string();
    assert!(text.contains("managed-key.sigstore.json"), "{text}");
}

/// A bundle (v0.3) with a DSSE in-toto statement naming `digest`, signed by
/// `key`, without a log entry: what `cosign sign --key ... --tlog-upload=false
/// --new-bundle-format` attaches.
pub fn key_signed_bundle(key: &SigningKey, digest: &str) -> Vec<u8> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let statement = serde_json::json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "component", "digest": {"sha256": digest.trim_start_matches("sha256:")}}],
        "predicateType": "https://sigstore.dev/cosign/sign/v1",
        "predicate": {},
    })
    .to_string();
    let payload_type = "application/vnd.in-toto+json";
    let pae = format!(
        "DSSEv1 {} {payload_type} {} {statement}",
        payload_type.len(),
        statement.len()
    );
    let signature = key.sign(pae.as_bytes()).unwrap();
    serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {"publicKey": {"hint": "test-key"}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": b64(statement.as_bytes()),
            "payloadType": payload_type,
            "signatures": [{"sig": b64(&signature), "keyid": ""}],
        },
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_bundle_needs_a_log_entry_or_timestamp_even_under_a_key_rule() {
    let dir = tempfile::tempdir().unwrap();
    let key = SigningKey::generate().unwrap();
    std::fs::write(dir.path().join("k.pub"), key.public_key_pem().unwrap()).unwrap();
    let rule = TrustRuleConfig {
        prefix: "r.example/".into(),
        key: Some("k.pub".into()),
        ..Default::default()
    }
    .resolve(dir.path())
    .unwrap();
    let digest = digest_of(b"a manifest");
    let evidence = vec![Evidence::Bundle {
        json: key_signed_bundle(&key, &digest),
        found_at: "made here".into(),
    }];
    // Sigstore refuses a bundle with neither (nothing shows when it was
    // signed); cosign's key signatures without a log use the legacy format.
    let text = rule.verify(&digest, &evidence).unwrap_err().to_string();
    assert!(
        text.contains("made here") && text.contains("tlog entry"),
        "{text}"
    );
}
