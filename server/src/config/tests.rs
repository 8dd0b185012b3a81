// figment::Jail closures must return figment::Error, which is large.
#![allow(clippy::result_large_err)]

use super::*;

#[test]
fn defaults_listen_on_loopback_50051_without_database_url() {
    figment::Jail::expect_with(|_jail| {
        let config = Config::load(None).expect("defaults load");
        assert_eq!(config.listen_addr, "127.0.0.1:50051".parse().unwrap());
        assert_eq!(config.database_url, None);
        assert_eq!(config.log.format, LogFormat::Text);
        Ok(())
    });
}

#[test]
fn environment_overrides_file_and_nested_keys_use_double_underscore() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "lore.toml",
            r#"
            listen_addr = "0.0.0.0:6000"
            [log]
            format = "text"
            [database]
            max_connections = 4
            "#,
        )?;
        jail.set_env("LORE_LOG__FORMAT", "json");
        jail.set_env("LORE_DATABASE__MAX_CONNECTIONS", "7");
        let config = Config::load(Some(Path::new("lore.toml"))).expect("config loads");
        assert_eq!(config.listen_addr, "0.0.0.0:6000".parse().unwrap());
        assert_eq!(config.log.format, LogFormat::Json);
        assert_eq!(config.database.max_connections, 7);
        Ok(())
    });
}

#[test]
fn plain_database_url_is_read_and_prefixed_one_wins() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("DATABASE_URL", "postgres://plain/db");
        assert_eq!(Config::load(None).unwrap().database_url.as_deref(), Some("postgres://plain/db"));
        jail.set_env("LORE_DATABASE_URL", "postgres://prefixed/db");
        assert_eq!(Config::load(None).unwrap().database_url.as_deref(), Some("postgres://prefixed/db"));
        Ok(())
    });
}

#[test]
fn unrelated_lore_variables_are_ignored() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("LORE_TOKEN", "secret-for-the-cli");
        Config::load(None).expect("LORE_TOKEN is not a server option");
        Ok(())
    });
}

#[test]
fn unknown_key_in_file_is_rejected_with_its_name() {
    figment::Jail::expect_with(|jail| {
        jail.create_file("lore.toml", "listen_adr = \"127.0.0.1:1\"\n")?;
        let error = Config::load(Some(Path::new("lore.toml"))).unwrap_err().to_string();
        assert!(error.contains("listen_adr"), "{error}");
        Ok(())
    });
}

#[test]
fn missing_config_file_names_the_path() {
    figment::Jail::expect_with(|_jail| {
        let error = Config::load(Some(Path::new("does-not-exist.toml"))).unwrap_err().to_string();
        assert!(error.contains("cannot read config file does-not-exist.toml"), "{error}");
        Ok(())
    });
}

#[test]
fn bad_values_are_rejected_with_the_option_path() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("LORE_LOG__FORMAT", "yaml");
        let error = Config::load(None).unwrap_err().to_string();
        assert!(error.contains("log.format"), "{error}");
        Ok(())
    });
    figment::Jail::expect_with(|jail| {
        jail.set_env("LORE_DATABASE_URL", "mysql://nope");
        let error = Config::load(None).unwrap_err().to_string();
        assert!(error.contains("database_url"), "{error}");
        Ok(())
    });
    figment::Jail::expect_with(|jail| {
        jail.set_env("LORE_WEB__PAGE_SIZE", "0");
        let error = Config::load(None).unwrap_err().to_string();
        assert!(error.contains("web.page_size"), "{error}");
        jail.set_env("LORE_WEB__PAGE_SIZE", "500");
        jail.set_env("LORE_WEB__LISTEN", "127.0.0.1:8080");
        let config = Config::load(None).expect("config loads");
        assert_eq!((config.web.page_size, config.web.listen), (500, Some("127.0.0.1:8080".parse().unwrap())));
        Ok(())
    });
}

#[test]
fn every_section_can_be_set_from_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("LORE_KNOWLEDGE__EMBEDDING__PROVIDER", "openai");
        jail.set_env("LORE_KNOWLEDGE__EMBEDDING__API_KEY", "sk-test");
        jail.set_env("LORE_KNOWLEDGE__SEARCH__SEMANTIC_SIGNAL_WEIGHT", "2.5");
        jail.set_env("LORE_REDACTION__EMAILS", "false");
        let config = Config::load(None).expect("config loads");
        assert!(!config.redaction.emails && config.redaction.cards);
        assert_eq!(config.knowledge.embedding.provider, lore_domain::knowledge::embed::ProviderKind::Openai);
        assert_eq!(config.knowledge.embedding.api_key.as_deref(), Some("sk-test"));
        assert_eq!(config.knowledge.search.semantic_signal_weight, 2.5);
        Ok(())
    });
    // Every top-level section is reachable: a section missing from the
    // allow-list is silently ignored, which is how the knowledge settings
    // once were.
    let sections = serde_json::to_value(Config::default()).unwrap();
    for key in sections.as_object().unwrap().keys() {
        assert!(super::ENV_TOP_LEVEL_KEYS.contains(&key.as_str()), "{key} cannot be set from the environment");
    }
}

#[test]
fn watched_folders_come_from_the_file_or_the_environment_and_are_checked() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "lore.toml",
            r#"
            [knowledge.watch]
            debounce_ms = 100
            [[knowledge.watch.folders]]
            path = "docs/learnings"
            project = "lore"
            "#,
        )?;
        let config = Config::load(Some(Path::new("lore.toml"))).expect("config loads");
        assert_eq!(config.knowledge.watch.debounce_ms, 100);
        assert_eq!(config.knowledge.watch.folders[0].path, Path::new("docs/learnings"));
        assert_eq!(config.knowledge.watch.folders[0].project, "lore");

        jail.set_env("LORE_KNOWLEDGE__WATCH__FOLDERS", r#"[{path="/srv/notes", project="ops"}]"#);
        let config = Config::load(None).expect("config loads");
        assert_eq!(config.knowledge.watch.folders[0].path, Path::new("/srv/notes"));
        assert_eq!(config.knowledge.watch.folders[0].project, "ops");

        jail.set_env("LORE_KNOWLEDGE__WATCH__FOLDERS", r#"[{path="/srv/notes", project="no spaces"}]"#);
        let error = Config::load(None).unwrap_err().to_string();
        assert!(error.contains("knowledge.watch.folders[0].project: must be"), "{error}");
        jail.set_env("LORE_KNOWLEDGE__WATCH__FOLDERS", "[]");
        jail.set_env("LORE_KNOWLEDGE__WATCH__DEBOUNCE_MS", "0");
        let error = Config::load(None).unwrap_err().to_string();
        assert!(error.contains("knowledge.watch: debounce_ms"), "{error}");
        Ok(())
    });
}

#[test]
fn own_hosts_come_from_the_file_or_the_environment_and_are_checked() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "lore.toml",
            r#"
            [trust]
            own_hosts = ["git.acme.internal"]
            [trust.project_hosts]
            payments = ["npm.payments.acme.example"]
            "#,
        )?;
        let config = Config::load(Some(Path::new("lore.toml"))).expect("config loads");
        assert_eq!(config.trust.own_hosts, ["git.acme.internal"]);
        assert_eq!(config.trust.project_hosts["payments"], ["npm.payments.acme.example"]);

        jail.set_env("LORE_TRUST__OWN_HOSTS", r#"["registry.acme.example"]"#);
        jail.set_env("LORE_TRUST__PROJECT_HOSTS", r#"{web=["cdn.web.example"]}"#);
        let config = Config::load(None).expect("config loads");
        assert_eq!(config.trust.own_hosts, ["registry.acme.example"]);
        assert_eq!(config.trust.project_hosts["web"], ["cdn.web.example"]);

        jail.set_env("LORE_TRUST__OWN_HOSTS", r#"["https://registry.acme.example/"]"#);
        let error = Config::load(None).unwrap_err().to_string();
        assert!(error.contains("trust.own_hosts[0]: `https://registry.acme.example/` is not a host name"), "{error}");
        Ok(())
    });
}

#[test]
fn read_replicas_come_from_the_file_or_the_environment_and_bad_urls_are_refused() {
    figment::Jail::expect_with(|jail| {
        jail.set_env(
            "LORE_DATABASE__READ_URLS",
            r#"["postgres://lore@replica-1:5432/lore", "postgres://lore@replica-2/lore"]"#,
        );
        jail.set_env("LORE_DATABASE__REPLICA_MAX_LAG_MS", "250");
        let config = Config::load(None).unwrap();
        assert_eq!(config.database.read_urls.len(), 2);
        assert_eq!(config.database.read_urls[1], "postgres://lore@replica-2/lore");
        assert_eq!((config.database.replica_max_lag_ms, config.database.replica_wait_ms), (250, 50));
        jail.set_env("LORE_DATABASE__READ_URLS", r#"["not a url"]"#);
        let error = Config::load(None).unwrap_err().to_string();
        assert!(error.contains("database.read_urls[0] is not a PostgreSQL URL"), "{error}");
        Ok(())
    });
}
