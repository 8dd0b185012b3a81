use super::*;

fn occurrences(patterns: &[(usize, &[&str])]) -> Vec<Occurrence<usize, usize>> {
    let mut id = 0;
    let mut all = Vec::new();
    for (pattern, messages) in patterns {
        for message in *messages {
            all.push(Occurrence { id, pattern: *pattern, template: Template::of(message) });
            id += 1;
        }
    }
    all
}

fn merged(judged: &Judged<usize, usize>) -> Vec<(usize, usize)> {
    judged
        .changes
        .iter()
        .map(|change| match change {
            Change::Merge { into: Target::Pattern(into), sources, .. } => match sources.as_slice() {
                [Target::Pattern(source)] => (*into, *source),
                other => panic!("one pattern merged at a time: {other:?}"),
            },
            other => panic!("only merges: {other:?}"),
        })
        .collect()
}

/// A list of block ids whose length varies: every length is one kind.
#[test]
fn a_list_whose_length_varies_is_one_kind() {
    let occurrences = occurrences(&[
        (
            1,
            &[
                "ask node to delete blk_a",
                "ask node to delete blk_b",
                "ask node to delete blk_c",
                "ask node to delete blk_d",
            ],
        ),
        (
            2,
            &[
                "ask node to delete blk_e blk_f blk_g",
                "ask node to delete blk_h blk_i blk_j",
                "ask node to delete blk_k blk_l blk_m",
            ],
        ),
        (3, &["ask node to delete blk_n blk_o", "ask node to delete blk_p blk_q", "ask node to delete blk_r blk_s"]),
    ]);
    let judged = merges(&occurrences, &BTreeSet::new());
    assert_eq!(merged(&judged), [(1, 2), (1, 3)], "{judged:?}");
    assert!(judged.bits_after < judged.bits_before, "{judged:?}");
}

/// A word one pattern always has and the other never is a constant that
/// tells two kinds apart, even when what follows it varies (`user=`).
#[test]
fn a_word_only_one_length_has_keeps_two_kinds_apart() {
    let occurrences = occurrences(&[
        (
            1,
            &[
                "authentication failure rhost=alpha user=root",
                "authentication failure rhost=beta user=admin",
                "authentication failure rhost=gamma user=guest",
                "authentication failure rhost=delta user=root",
            ],
        ),
        (
            2,
            &[
                "authentication failure rhost=epsilon",
                "authentication failure rhost=zeta",
                "authentication failure rhost=eta",
            ],
        ),
        (3, &["session opened for user fztu by root", "session opened for user fztu by admin"]),
        (4, &["session closed for user fztu", "session closed for user fztu"]),
    ]);
    let judged = merges(&occurrences, &BTreeSet::new());
    assert_eq!(merged(&judged), [], "{judged:?}");
    assert_eq!(judged.bits_after, judged.bits_before);
}

/// A pattern a person merged or split stays as they left it; patterns of
/// one length are Brain's to merge, not this.
#[test]
fn pinned_patterns_and_patterns_of_one_length_are_left_alone() {
    let kinds: [(usize, &[&str]); 2] = [
        (1, &["ask node to delete blk_a", "ask node to delete blk_b", "ask node to delete blk_c"]),
        (2, &["ask node to delete blk_e blk_f", "ask node to delete blk_h blk_i", "ask node to delete blk_k blk_l"]),
    ];
    assert_eq!(merged(&merges(&occurrences(&kinds), &BTreeSet::from([2]))), []);
    let same_length: [(usize, &[&str]); 2] = [
        (1, &["ask node to delete blk_a", "ask node to delete blk_b"]),
        (2, &["ask node to delete blk_c", "ask node to delete blk_d"]),
    ];
    assert_eq!(merged(&merges(&occurrences(&same_length), &BTreeSet::new())), []);
}
