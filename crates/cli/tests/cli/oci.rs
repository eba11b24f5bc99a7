//! Modules from an OCI registry: `push`, `pull`, `lock`, `verify`, pins,
//! signatures, against a real registry (`docker-registry`, CNCF
//! distribution 2.8) started on 127.0.0.1 by each test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use toolhost_testkit::guest;
use toolhost_testkit::http_server::{Reply, TestCa, TestServer};
use toolhost_testkit::registry::{
    RegistryAuth, TestRegistry, key_pair_pem, key_pair_pem_of, sha256,
};
use toolhost_testkit::token_server::TokenServer;

/// A folder with a config, a cache and a Docker config of its own.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new(config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
        std::fs::create_dir(dir.path().join("docker")).unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path().join(name), text).unwrap();
    }

    fn cache(&self) -> PathBuf {
        self.path().join("cache")
    }

    /// Runs `toolhost` here with this site's cache and Docker config.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .arg("--cache-dir")
            .arg(self.cache())
            .args(args)
            .current_dir(self.path())
            .env("DOCKER_CONFIG", self.path().join("docker"))
            .env(
                "TOOLHOST_LOG",
                std::env::var("OCI_TEST_LOG").unwrap_or_default(),
            )
            .output()
            .expect("toolhost runs")
    }

    /// Forgets every pulled component.
    fn clear_cache(&self) {
        let _ = std::fs::remove_dir_all(self.cache());
    }

    fn login(&self, host: &str, user: &str, password: &str) {
        use base64::Engine as _;
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let config = json!({"auths": {host: {"auth": auth}}});
        self.write("docker/config.json", &config.to_string());
    }
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn both(o: &Output) -> String {
    format!("{}{}", out(o), err(o))
}

fn echo() -> PathBuf {
    guest("guest-echo")
}

fn verbatim() -> PathBuf {
    guest("guest-verbatim")
}

fn registries(registry: &TestRegistry) -> String {
    format!(
        "[[registries]]\nhost = \"{}\"\nplain_http = true\n",
        registry.host()
    )
}

fn module(reference: &str) -> String {
    format!("[[modules]]\nname = \"tool\"\noci = \"{reference}\"\n")
}

/// Pushes `file` to `reference` (signed with the key file if given);
/// returns the digest printed.
fn push(site: &Site, file: &Path, reference: &str, key: Option<&str>) -> String {
    let mut args = vec!["push", file.to_str().unwrap(), reference];
    if let Some(key) = key {
        args.extend(["--sign-key", key]);
    }
    let o = site.run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let digest = out(&o).trim().to_string();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );
    digest
}

fn call_echo(site: &Site, text: &str) -> Output {
    site.run(&["call", "tool_echo", &json!({ "text": text }).to_string()])
}

#[test]
fn push_writes_the_wkg_layout_and_a_pinned_module_runs_it_byte_for_byte() {
    let registry = TestRegistry::start();
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new(&registries(&registry));
    let digest = push(&site, &echo(), &reference, None);

    // The manifest as wkg writes it, and the component byte for byte.
    let manifest = registry.manifest("acme/echo", &digest);
    assert_eq!(manifest.status, 200);
    assert_eq!(sha256(&manifest.body), digest);
    let manifest: Value = serde_json::from_slice(&manifest.body).unwrap();
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0]["mediaType"], "application/wasm");
    let component = std::fs::read(echo()).unwrap();
    let layer_digest = layers[0]["digest"].as_str().unwrap();
    assert_eq!(layer_digest, sha256(&component));
    assert_eq!(
        std::fs::read(registry.blob_path(layer_digest)).unwrap(),
        component
    );
    let config_digest = manifest["config"]["digest"].as_str().unwrap();
    let config: Value =
        serde_json::from_slice(&std::fs::read(registry.blob_path(config_digest)).unwrap()).unwrap();
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["layerDigests"][0], layer_digest);

    // Pinned with @sha256: pulled, kept by digest, and run.
    let pinned = format!("{}/acme/echo@{digest}", registry.host());
    site.write(
        "toolhost.toml",
        &format!("{}{}", registries(&registry), module(&pinned)),
    );
    let pulled = site.run(&["pull"]);
    assert!(pulled.status.success(), "{}", err(&pulled));
    let line = out(&pulled);
    assert!(
        line.contains(&format!(" {pinned} (")) && line.matches(&digest).count() == 1,
        "the reference once, with its digest once: {line}"
    );
    let o = call_echo(&site, "hi");
    assert_eq!(out(&o), "hi\n", "{}", err(&o));
    let kept = site
        .cache()
        .join("oci")
        .join(format!("blob-{}", layer_digest.replace(':', "-")));
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        component,
        "kept byte for byte"
    );

    // The registry stopped: the pinned module loads from the store.
    drop(registry);
    let o = call_echo(&site, "offline");
    assert_eq!(out(&o), "offline\n", "{}", err(&o));
}

#[test]
fn a_bare_tag_is_refused_naming_the_three_fixes_and_a_wrong_digest_naming_both() {
    let registry = TestRegistry::start();
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new(&registries(&registry));
    let digest = push(&site, &echo(), &reference, None);

    site.write(
        "toolhost.toml",
        &format!("{}{}", registries(&registry), module(&reference)),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    let text = out(&o);
    for needle in [
        "bare tag",
        "@sha256:",
        "digest = ",
        "toolhost lock",
        "[[trust]]",
    ] {
        assert!(text.contains(needle), "{needle} missing: {text}");
    }

    // `digest` beside the tag: the registry disagrees.
    let wrong = format!("sha256:{}", "0".repeat(64));
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}digest = \"{wrong}\"\n",
            registries(&registry),
            module(&reference)
        ),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains(&wrong) && out(&o).contains(&digest) && out(&o).contains("disagrees"),
        "{}",
        out(&o)
    );
    // And the right one loads.
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}digest = \"{digest}\"\n",
            registries(&registry),
            module(&reference)
        ),
    );
    let o = call_echo(&site, "pinned");
    assert_eq!(out(&o), "pinned\n", "{}", err(&o));

    // A digest the registry does not have.
    let missing = format!("{}/acme/echo@{wrong}", registry.host());
    site.write(
        "toolhost.toml",
        &format!("{}{}", registries(&registry), module(&missing)),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("not found") && out(&o).contains("404"),
        "{}",
        out(&o)
    );
}

#[test]
fn lock_pins_the_tag_and_a_moved_tag_changes_nothing_until_lock_update() {
    let registry = TestRegistry::start();
    let reference = format!("{}/acme/tool:1.0", registry.host());
    let site = Site::new(&format!("{}{}", registries(&registry), module(&reference)));
    let first = push(&site, &echo(), &reference, None);

    let o = site.run(&["lock"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let lock = std::fs::read_to_string(site.path().join("toolhost.lock")).unwrap();
    let parsed: toml::Value = toml::from_str(&lock).unwrap();
    let entry = &parsed["module"][0];
    assert_eq!(entry["name"].as_str(), Some("tool"));
    assert_eq!(entry["reference"].as_str(), Some(reference.as_str()));
    assert_eq!(entry["digest"].as_str(), Some(first.as_str()));
    assert_eq!(
        entry["size"].as_integer(),
        Some(std::fs::metadata(echo()).unwrap().len() as i64)
    );
    assert!(
        entry["verified"]
            .as_str()
            .unwrap()
            .contains("toolhost lock")
    );

    // The tag moves to another component: the locked one still runs, even
    // with nothing kept.
    let second = push(&site, &verbatim(), &reference, None);
    assert_ne!(first, second);
    site.clear_cache();
    let o = call_echo(&site, "still echo");
    assert_eq!(out(&o), "still echo\n", "{}", err(&o));
    // `lock` keeps what is locked; `lock --update` moves it.
    let o = site.run(&["lock"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        std::fs::read_to_string(site.path().join("toolhost.lock"))
            .unwrap()
            .contains(&first)
    );
    let o = site.run(&["lock", "--update", "tool"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        std::fs::read_to_string(site.path().join("toolhost.lock"))
            .unwrap()
            .contains(&second)
    );
    let o = site.run(&["list"]);
    assert!(!out(&o).contains("tool_echo"), "{}", both(&o));

    // The config names another reference: the lock entry no longer applies.
    let other = format!("{}/acme/tool:2.0", registry.host());
    site.write(
        "toolhost.toml",
        &format!("{}{}", registries(&registry), module(&other)),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("run `toolhost lock`") && out(&o).contains(&reference),
        "{}",
        out(&o)
    );
    let o = site.run(&["lock", "--update", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no OCI module 'nosuch'"), "{}", err(&o));

    // A lock that pins another digest than `digest`: refused naming both.
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}digest = \"{first}\"\n",
            registries(&registry),
            module(&reference)
        ),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains(&first) && out(&o).contains(&second),
        "{}",
        out(&o)
    );
}

/// Keys in the site: `trusted.pem`/`.pub` and `other.pem`/`.pub`.
fn with_keys(site: &Site) {
    for name in ["trusted", "other"] {
        let (private, public) = key_pair_pem();
        site.write(&format!("{name}.pem"), &private);
        site.write(&format!("{name}.pub"), &public);
    }
}

fn trust_key(registry: &TestRegistry, key: &str) -> String {
    format!(
        "[[trust]]\nprefix = \"{}/acme/\"\nkey = \"{key}\"\n",
        registry.host()
    )
}

#[test]
fn signatures_decide_for_tags_covered_by_a_rule() {
    let registry = TestRegistry::start();
    let site = Site::new(&registries(&registry));
    with_keys(&site);
    let signed = format!("{}/acme/signed:1.0", registry.host());
    let by_other = format!("{}/acme/other:1.0", registry.host());
    let unsigned = format!("{}/acme/unsigned:1.0", registry.host());
    let signed_digest = push(&site, &echo(), &signed, Some("trusted.pem"));
    let other_digest = push(&site, &echo(), &by_other, Some("other.pem"));
    let unsigned_digest = push(&site, &verbatim(), &unsigned, None);
    let config = |reference: &str| {
        format!(
            "{}{}{}",
            registries(&registry),
            trust_key(&registry, "trusted.pub"),
            module(reference)
        )
    };

    // Signed with the trusted key: a bare tag loads, and verify says so.
    site.write("toolhost.toml", &config(&signed));
    let o = call_echo(&site, "signed");
    assert_eq!(out(&o), "signed\n", "{}", err(&o));
    let o = site.run(&["verify", &signed]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        out(&o).contains(&signed_digest)
            && out(&o).contains("verified: cosign signature by key trusted.pub"),
        "{}",
        out(&o)
    );

    // Another key, no signature: refused naming reference, digest, rule and what was found.
    for (reference, digest, found) in [
        (&by_other, &other_digest, "not signed by key trusted.pub"),
        (&unsigned, &unsigned_digest, "no signature was found"),
    ] {
        site.write("toolhost.toml", &config(reference));
        let o = site.run(&["check"]);
        assert_eq!(o.status.code(), Some(2));
        let text = out(&o);
        for needle in [
            reference.as_str(),
            digest.as_str(),
            "[[trust]] prefix",
            "trusted.pub",
            found,
        ] {
            assert!(text.contains(needle), "{needle} missing: {text}");
        }
        let o = site.run(&["verify", reference]);
        assert_eq!(o.status.code(), Some(1), "{}", both(&o));
        assert!(
            out(&o).contains("NOT verified") && out(&o).contains(found),
            "{}",
            out(&o)
        );
    }

    // A valid signature by the trusted key, but for another digest: copy
    // the signed component's signature manifest to the unsigned one's tag.
    let sig = registry.manifest(
        "acme/signed",
        &format!("{}.sig", signed_digest.replace(':', "-")),
    );
    assert_eq!(sig.status, 200);
    // The payload blob must be in the other repository too.
    let sig_manifest: Value = serde_json::from_slice(&sig.body).unwrap();
    for blob in [
        &sig_manifest["config"]["digest"],
        &sig_manifest["layers"][0]["digest"],
    ] {
        let bytes = std::fs::read(registry.blob_path(blob.as_str().unwrap())).unwrap();
        registry.push_blob("acme/unsigned", &bytes);
    }
    registry.put_manifest(
        "acme/unsigned",
        &format!("{}.sig", unsigned_digest.replace(':', "-")),
        "application/vnd.oci.image.manifest.v1+json",
        &sig.body,
    );
    site.write("toolhost.toml", &config(&unsigned));
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("payload is for another digest") && out(&o).contains(&signed_digest),
        "{}",
        out(&o)
    );

    // A pin does not lift the rule: the pinned unsigned digest is still refused.
    let pinned = format!("{}/acme/unsigned@{unsigned_digest}", registry.host());
    site.write("toolhost.toml", &config(&pinned));
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));

    // The longest prefix wins: a rule for acme/unsigned alone with the other key.
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}[[trust]]\nprefix = \"{}/acme/other\"\nkey = \"other.pub\"\n{}",
            registries(&registry),
            trust_key(&registry, "trusted.pub"),
            registry.host(),
            module(&by_other)
        ),
    );
    let o = call_echo(&site, "other key, own rule");
    assert_eq!(out(&o), "other key, own rule\n", "{}", err(&o));
    let o = site.run(&["verify", &by_other]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(out(&o).contains("(in force): verified"), "{}", out(&o));
    assert!(
        out(&o).contains("NOT verified"),
        "the shorter rule is shown too: {}",
        out(&o)
    );

    // Verified once, the signature is kept: the registry stopped, it loads.
    site.write(
        "toolhost.toml",
        &config(&format!("{}/acme/signed@{signed_digest}", registry.host())),
    );
    let o = call_echo(&site, "online");
    assert_eq!(out(&o), "online\n", "{}", err(&o));
    drop(registry);
    let o = call_echo(&site, "offline, verified from the store");
    assert_eq!(out(&o), "offline, verified from the store\n", "{}", err(&o));
}

#[test]
fn push_signs_with_ecdsa_and_ed25519_keys_and_each_verifies_only_with_its_own() {
    let registry = TestRegistry::start();
    let site = Site::new(&registries(&registry));
    let kinds = ["p256", "p384", "ed25519"];
    for kind in kinds {
        let (private, public) = key_pair_pem_of(kind);
        site.write(&format!("{kind}.pem"), &private);
        site.write(&format!("{kind}.pub"), &public);
        let reference = format!("{}/acme/{kind}:1.0", registry.host());
        push(&site, &echo(), &reference, Some(&format!("{kind}.pem")));
    }
    for signer in kinds {
        for key in kinds {
            site.write(
                "toolhost.toml",
                &format!(
                    "{}[[trust]]\nprefix = \"{}/acme/\"\nkey = \"{key}.pub\"\n",
                    registries(&registry),
                    registry.host()
                ),
            );
            let o = site.run(&["verify", &format!("{}/acme/{signer}:1.0", registry.host())]);
            let expected = if signer == key { 0 } else { 1 };
            assert_eq!(
                o.status.code(),
                Some(expected),
                "{signer} by {key}: {}",
                both(&o)
            );
        }
    }
}

/// Attaches `bundle` to `digest` of `repository` as a referrer, by the
/// referrers tag schema (distribution 2.8 has no referrers API).
fn attach_bundle(
    registry: &TestRegistry,
    repository: &str,
    digest: &str,
    size: usize,
    bundle: &[u8],
) {
    let media = "application/vnd.dev.sigstore.bundle.v0.3+json";
    let bundle_digest = registry.push_blob(repository, bundle);
    let empty = registry.push_blob(repository, b"{}");
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": media,
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty, "size": 2},
        "layers": [{"mediaType": media, "digest": bundle_digest, "size": bundle.len()}],
        "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest, "size": size},
    })
    .to_string();
    let referrer = registry.put_manifest(
        repository,
        &sha256(manifest.as_bytes()),
        "application/vnd.oci.image.manifest.v1+json",
        manifest.as_bytes(),
    );
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": referrer, "size": manifest.len(), "artifactType": media}],
    })
    .to_string();
    registry.put_manifest(
        repository,
        &digest.replace(':', "-"),
        "application/vnd.oci.image.index.v1+json",
        index.as_bytes(),
    );
}

#[test]
fn keyless_rules_find_bundles_by_referrers_and_check_what_they_sign() {
    let registry = TestRegistry::start();
    let site = Site::new(&registries(&registry));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/sigstore");
    std::fs::copy(
        fixtures.join("trusted_root.json"),
        site.path().join("trusted_root.json"),
    )
    .unwrap();
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let digest = push(&site, &echo(), &reference, None);
    let manifest = registry.manifest("acme/echo", &digest);
    // A real keyless bundle, attached to this component: it signs another
    // artifact (a text file), so it is no signature of this digest.
    let bundle = std::fs::read(fixtures.join("cosign-v3-blob.sigstore.json")).unwrap();
    attach_bundle(
        &registry,
        "acme/echo",
        &digest,
        manifest.body.len(),
        &bundle,
    );
    for identity in [
        "identity = \"w.vollprecht@gmail.com\"",
        "identity = \"someone@example.com\"",
    ] {
        site.write(
            "toolhost.toml",
            &format!(
                "{}[[trust]]\nprefix = \"{}/acme/\"\n{identity}\nissuer = \"https://github.com/login/oauth\"\ntrusted_root = \"trusted_root.json\"\n{}",
                registries(&registry),
                registry.host(),
                module(&reference)
            ),
        );
        let o = site.run(&["check"]);
        assert_eq!(o.status.code(), Some(2));
        let text = out(&o);
        assert!(
            text.contains("Sigstore bundle in referrer") && text.contains(&digest),
            "{text}"
        );
        let o = site.run(&["verify", &reference]);
        assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    }
    // A key rule meets a keyless bundle: refused too, and says what it found.
    with_keys(&site);
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}{}",
            registries(&registry),
            trust_key(&registry, "trusted.pub"),
            module(&reference)
        ),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).contains("1 signature(s) found"), "{}", out(&o));
}

#[test]
fn corrupt_and_oversized_blobs_are_refused_before_anything_runs() {
    let registry = TestRegistry::start();
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new(&registries(&registry));
    let digest = push(&site, &echo(), &reference, None);
    let pinned = format!("{}/acme/echo@{digest}", registry.host());

    // The declared layer is larger than max_component_bytes: refused
    // before it is downloaded.
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}limits = {{ max_component_bytes = 1000 }}\n",
            registries(&registry),
            module(&pinned)
        ),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("max_component_bytes") && out(&o).contains("nothing was downloaded"),
        "{}",
        out(&o)
    );
    let kept: Vec<_> = std::fs::read_dir(site.cache().join("oci"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(kept.len(), 1, "only the manifest is kept: {kept:?}");

    // A layer corrupted in the registry's storage: refused, nothing kept.
    let layer = sha256(&std::fs::read(echo()).unwrap());
    let stored = registry.blob_path(&layer);
    let mut bytes = std::fs::read(&stored).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&stored, &bytes).unwrap();
    site.write(
        "toolhost.toml",
        &format!("{}{}", registries(&registry), module(&pinned)),
    );
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("does not match its digest") && out(&o).contains(&layer),
        "{}",
        out(&o)
    );
    assert!(
        !site
            .cache()
            .join("oci")
            .join(format!("blob-{}", layer.replace(':', "-")))
            .exists()
    );
}

#[test]
fn manifests_without_one_wasm_layer_are_refused_saying_what_was_found() {
    let registry = TestRegistry::start();
    let site = Site::new(&registries(&registry));
    let blob = registry.push_blob("acme/odd", b"not wasm");
    let config = registry.push_blob("acme/odd", b"{}");
    let manifest = |layers: Value| {
        json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.wasm.config.v0+json", "digest": config, "size": 2},
            "layers": layers,
        })
        .to_string()
    };
    let tar = manifest(
        json!([{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": blob, "size": 8}]),
    );
    let two = manifest(json!([
        {"mediaType": "application/wasm", "digest": blob, "size": 8},
        {"mediaType": "application/vnd.wasm.component.v1", "digest": blob, "size": 8},
    ]));
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": sha256(tar.as_bytes()), "size": tar.len(),
            "platform": {"os": "linux", "architecture": "amd64"}}],
    })
    .to_string();
    for (body, found, media_type) in [
        (
            tar,
            "application/vnd.oci.image.layer.v1.tar",
            "application/vnd.oci.image.manifest.v1+json",
        ),
        (
            two,
            "2 wasm layers",
            "application/vnd.oci.image.manifest.v1+json",
        ),
        (
            index,
            "image index without a wasm manifest (entries: linux/amd64)",
            "application/vnd.oci.image.index.v1+json",
        ),
    ] {
        let digest = registry.put_manifest(
            "acme/odd",
            &sha256(body.as_bytes()),
            media_type,
            body.as_bytes(),
        );
        site.write(
            "toolhost.toml",
            &format!(
                "{}{}",
                registries(&registry),
                module(&format!("{}/acme/odd@{digest}", registry.host()))
            ),
        );
        let o = site.run(&["check"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            out(&o).contains("not a wasm component artifact") && out(&o).contains(found),
            "{}",
            out(&o)
        );
    }
}

#[test]
fn pull_fetches_every_oci_module_ahead_of_time() {
    let registry = TestRegistry::start();
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new(&registries(&registry));
    push(&site, &echo(), &reference, None);
    site.write(
        "toolhost.toml",
        &format!("{}{}", registries(&registry), module(&reference)),
    );
    let o = site.run(&["lock"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    site.clear_cache();
    let o = site.run(&["pull"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(out(&o).contains("pulled"), "{}", out(&o));
    drop(registry);
    let o = call_echo(&site, "air-gapped");
    assert_eq!(out(&o), "air-gapped\n", "{}", err(&o));
}

#[test]
fn basic_auth_needs_the_docker_config_credentials() {
    let registry = TestRegistry::start_with(RegistryAuth::Basic {
        user: "alice".into(),
        password: "s3cret".into(),
    });
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new(&registries(&registry));
    let o = site.run(&["push", echo().to_str().unwrap(), &reference]);
    assert_ne!(o.status.code(), Some(0));
    let text = err(&o);
    assert!(
        text.contains(registry.host()) && text.contains("docker/config.json"),
        "{text}"
    );

    site.login(registry.host(), "alice", "s3cret");
    let digest = push(&site, &echo(), &reference, None);
    let pinned = format!("{}/acme/echo@{digest}", registry.host());
    site.write(
        "toolhost.toml",
        &format!("{}{}", registries(&registry), module(&pinned)),
    );
    let o = call_echo(&site, "with credentials");
    assert_eq!(out(&o), "with credentials\n", "{}", err(&o));

    // Without them: 401, naming the registry and where credentials are read.
    site.write("docker/config.json", "{}");
    site.clear_cache();
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    let text = out(&o);
    assert!(
        text.contains("401")
            && text.contains(registry.host())
            && text.contains("docker/config.json"),
        "{text}"
    );
    assert!(!text.contains("s3cret"));
}

/// `[[registries]]` entries for a plain HTTP registry and for its token
/// service (on another port), so that credentials may go to both.
fn registries_with_tokens(registry: &TestRegistry, tokens: &TokenServer) -> String {
    format!(
        "{}[[registries]]\nhost = \"{}\"\nplain_http = true\n",
        registries(registry),
        tokens.host()
    )
}

#[test]
fn bearer_tokens_come_from_the_registry_token_service() {
    let tokens = TokenServer::start("bob", "hunter2");
    let registry = TestRegistry::start_with(tokens.registry_auth());
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new(&registries_with_tokens(&registry, &tokens));
    let o = site.run(&["push", echo().to_str().unwrap(), &reference]);
    assert_ne!(o.status.code(), Some(0), "{}", both(&o));
    assert!(err(&o).contains("docker/config.json"), "{}", err(&o));

    site.login(registry.host(), "bob", "hunter2");
    // The token service is on plain HTTP on another port: no credentials
    // go there until an entry marks that host plain_http.
    site.write("toolhost.toml", &registries(&registry));
    let o = site.run(&["push", echo().to_str().unwrap(), &reference]);
    assert_ne!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        err(&o).contains(&format!("http://{}/token", tokens.host()))
            && err(&o).contains("clear text"),
        "{}",
        err(&o)
    );
    assert_eq!(tokens.issued(), 0);

    site.write("toolhost.toml", &registries_with_tokens(&registry, &tokens));
    let digest = push(&site, &echo(), &reference, None);
    assert!(tokens.issued() > 0);
    let pinned = format!("{}/acme/echo@{digest}", registry.host());
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}",
            registries_with_tokens(&registry, &tokens),
            module(&pinned)
        ),
    );
    let o = call_echo(&site, "token");
    assert_eq!(out(&o), "token\n", "{}", err(&o));
}

#[test]
fn an_identity_token_is_exchanged_for_access_tokens() {
    let tokens = TokenServer::start("carol", "pa55");
    let registry = TestRegistry::start_with(tokens.registry_auth());
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new(&registries_with_tokens(&registry, &tokens));
    let config = json!({"auths": {registry.host(): {"identitytoken": tokens.identity_token()}}});
    site.write("docker/config.json", &config.to_string());
    let digest = push(&site, &echo(), &reference, None);
    let pinned = format!("{}/acme/echo@{digest}", registry.host());
    site.write(
        "toolhost.toml",
        &format!(
            "{}{}",
            registries_with_tokens(&registry, &tokens),
            module(&pinned)
        ),
    );
    let o = call_echo(&site, "refreshed");
    assert_eq!(out(&o), "refreshed\n", "{}", err(&o));

    let config = json!({"auths": {registry.host(): {"identitytoken": "not-the-token"}}});
    site.write("docker/config.json", &config.to_string());
    site.clear_cache();
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("docker/config.json") && out(&o).contains(registry.host()),
        "{}",
        out(&o)
    );
}

/// A registry that answers every request 401 with a bearer challenge
/// sending clients to `realm` for tokens.
fn challenging(realm: &str) -> Reply {
    let body = r#"{"errors":[{"code":"UNAUTHORIZED"}]}"#;
    Reply::Raw {
        bytes: format!(
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"{realm}\",service=\"svc\"\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    }
}

/// A site whose one module is pinned on the HTTPS test registry `registry`
/// (trusted through `ca.pem`), with `extra` config after it.
fn https_site(ca: &TestCa, registry: &TestServer, extra: &str) -> Site {
    let host = registry.addr().to_string();
    let pinned = format!("{host}/acme/echo@sha256:{}", "a".repeat(64));
    let site = Site::new(&format!(
        "[[registries]]\nhost = \"{host}\"\nca_file = \"ca.pem\"\n{extra}{}",
        module(&pinned)
    ));
    ca.write_pem(&site.path().join("ca.pem"));
    site
}

/// The Docker configs of case A (basic credentials) and case B (an
/// identity token) for `host`.
fn credentials_of_both_kinds(host: &str) -> [(&'static str, Value); 2] {
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode("dave:s3cret-pw");
    [
        ("basic", json!({"auths": {host: {"auth": auth}}})),
        (
            "identity token",
            json!({"auths": {host: {"identitytoken": "refresh-s3cret"}}}),
        ),
    ]
}

#[test]
fn credentials_never_go_to_a_plain_http_token_service_the_config_did_not_name() {
    let ca = TestCa::new();
    let realm = TestServer::start([("/token", Reply::text(200, r#"{"token":"t0ken"}"#))]);
    let realm_url = format!("{}/token", realm.origin_ip());
    let registry = TestServer::start_tls([("/v2/", challenging(&realm_url))], &ca);
    let host = registry.addr().to_string();
    for (kind, credentials) in credentials_of_both_kinds(&host) {
        let site = https_site(&ca, &registry, "");
        site.write("docker/config.json", &credentials.to_string());
        let o = site.run(&["pull"]);
        assert_ne!(o.status.code(), Some(0), "{kind}: {}", both(&o));
        assert!(
            both(&o).contains(&realm_url)
                && both(&o).contains("clear text")
                && both(&o).contains(&format!("host = \"{}\"", realm.addr())),
            "{kind}: the error names the realm and why: {}",
            both(&o)
        );
        assert!(
            realm.requests().is_empty(),
            "{kind}: nothing was sent to the plain HTTP realm"
        );
        // A push asks the same token service, and is refused the same way.
        let o = site.run(&[
            "push",
            echo().to_str().unwrap(),
            &format!("{host}/acme/echo:1"),
        ]);
        assert_ne!(o.status.code(), Some(0), "{kind}: {}", both(&o));
        assert!(both(&o).contains("clear text"), "{kind}: {}", both(&o));
        assert!(realm.requests().is_empty(), "{kind}: nothing sent on push");
    }
    // Anonymous: nothing secret to send, so the token is asked for.
    let site = https_site(&ca, &registry, "");
    let o = site.run(&["pull"]);
    assert_ne!(o.status.code(), Some(0));
    let asked = realm.requests();
    assert!(!asked.is_empty(), "{}", both(&o));
    assert!(asked.iter().all(|r| r.header("authorization").is_none()));
}

#[test]
fn credentials_go_to_an_https_token_service_or_a_plain_http_host_an_entry_names() {
    let ca = TestCa::new();
    let answer = Reply::text(200, r#"{"access_token":"t0ken"}"#);
    let plain = TestServer::start([("/token", answer.clone())]);
    let tls = TestServer::start_tls([("/token", answer)], &ca);
    let entry = format!(
        "[[registries]]\nhost = \"{}\"\nplain_http = true\n",
        plain.addr()
    );
    for (realm, extra) in [(&tls, String::new()), (&plain, entry)] {
        let realm_url = format!("{}/token", realm.origin_ip());
        let registry = TestServer::start_tls([("/v2/", challenging(&realm_url))], &ca);
        let host = registry.addr().to_string();
        for (kind, credentials) in credentials_of_both_kinds(&host) {
            let site = https_site(&ca, &registry, &extra);
            site.write("docker/config.json", &credentials.to_string());
            let before = realm.requests().len();
            let o = site.run(&["pull"]);
            let asked = &realm.requests()[before..];
            let sent = match kind {
                "basic" => asked.iter().any(|r| {
                    r.method == "GET"
                        && r.header("authorization")
                            .is_some_and(|a| a.starts_with("Basic "))
                        && r.path.contains("scope=repository%3Aacme%2Fecho%3Apull")
                }),
                _ => asked.iter().any(|r| {
                    r.method == "POST"
                        && String::from_utf8_lossy(&r.body).contains("refresh_token=refresh-s3cret")
                }),
            };
            assert!(sent, "{kind} to {realm_url}: {asked:?}\n{}", both(&o));
            assert!(
                registry
                    .requests()
                    .iter()
                    .any(|r| r.path.contains("/manifests/")
                        && r.header("authorization") == Some("Bearer t0ken")),
                "{kind}: the token was used"
            );
        }
    }
}

#[test]
fn token_answers_are_bounded_in_size_and_time() {
    let ca = TestCa::new();
    let realm = TestServer::start([
        ("/endless", Reply::Chunked { len: usize::MAX }),
        ("/drip", Reply::Trickle { interval_ms: 100 }),
    ]);
    let endless = format!("{}/endless", realm.origin_ip());
    let registry = TestServer::start_tls([("/v2/", challenging(&endless))], &ca);
    let site = https_site(&ca, &registry, "");
    let o = site.run(&["pull"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        both(&o).contains(&format!("the token answer from {endless}"))
            && both(&o).contains("past the most accepted (65536 bytes)"),
        "{}",
        both(&o)
    );

    let drip = format!("{}/drip", realm.origin_ip());
    let registry = TestServer::start_tls([("/v2/", challenging(&drip))], &ca);
    let host = registry.addr().to_string();
    let site = Site::new(&format!(
        "[[registries]]\nhost = \"{host}\"\nca_file = \"ca.pem\"\ntimeout_ms = 1500\n{}",
        module(&format!("{host}/acme/echo@sha256:{}", "a".repeat(64)))
    ));
    ca.write_pem(&site.path().join("ca.pem"));
    let o = site.run(&["pull"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        both(&o).contains(&format!("registry {host}"))
            && both(&o).contains("within 1500 ms")
            && both(&o).contains("timeout_ms"),
        "the error names the host and the deadline: {}",
        both(&o)
    );
}

#[test]
fn plain_http_is_only_for_registries_that_say_so() {
    let registry = TestRegistry::start();
    let pinned = format!("{}/acme/echo@sha256:{}", registry.host(), "a".repeat(64));
    // No [[registries]] entry: HTTPS, which this plain HTTP registry cannot speak.
    let site = Site::new(&module(&pinned));
    let o = site.run(&["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).contains(registry.host()), "{}", out(&o));
    assert!(
        !out(&o).contains("not found"),
        "it never got an HTTP answer: {}",
        out(&o)
    );
}

#[test]
fn https_registries_are_checked_against_the_bundled_roots_and_a_ca_file() {
    let ca = toolhost_testkit::http_server::TestCa::new();
    let registry = TestRegistry::start_tls(&ca);
    let reference = format!("{}/acme/echo:1.0", registry.host());
    let site = Site::new("");
    ca.write_pem(&site.path().join("ca.pem"));
    // HTTPS by default, against the bundled roots: this test CA is not one.
    let o = site.run(&["push", echo().to_str().unwrap(), &reference]);
    assert_ne!(o.status.code(), Some(0));
    assert!(err(&o).contains(registry.host()), "{}", err(&o));
    assert!(
        err(&o).to_ascii_lowercase().contains("certificate"),
        "{}",
        err(&o)
    );
    // With the CA file for this host: pushed, pulled and run over HTTPS.
    let tls = format!(
        "[[registries]]\nhost = \"{}\"\nca_file = \"ca.pem\"\n",
        registry.host()
    );
    site.write("toolhost.toml", &tls);
    let digest = push(&site, &echo(), &reference, None);
    let pinned = format!("{}/acme/echo@{digest}", registry.host());
    site.write("toolhost.toml", &format!("{tls}{}", module(&pinned)));
    let o = call_echo(&site, "over https");
    assert_eq!(out(&o), "over https\n", "{}", err(&o));
}
