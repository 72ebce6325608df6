//! A fresh process renders every system's families, at zero, before it creates any object: the
//! process-wide registry declares them all on first use. One test in its own binary, so nothing
//! else has created an object first.

use wkcore::metrics::{global, MetricType};

#[test]
fn a_fresh_process_renders_every_family_before_any_object() {
    let mut text = String::new();
    global().render(&mut text);
    for name in [
        "wukongim_slot_proposal_admission_total",
        "wukongim_mqtt_owner_work",
        "wukongim_mqtt_owner_sweep_total",
        "wkcore_coord_claims_total",
        "wkcore_coord_finalizations_total",
    ] {
        assert!(
            text.contains(&format!("# TYPE {name} ")),
            "{name} not rendered:\n{text}"
        );
    }
    for family in wkcore::tag::tag_families()
        .chain(wkcore::owner::owner_families())
        .chain(wkcore::coord::coord_families())
    {
        assert!(
            text.contains(&format!("# HELP {} ", family.name)),
            "{}",
            family.name
        );
    }
    let snapshot = global().snapshot();
    assert!(snapshot.families.len() >= 8);
    for family in &snapshot.families {
        assert_eq!(family.values.len(), family.family.series.len());
        assert!(
            family.values.iter().all(|&v| v == 0),
            "{} not at zero",
            family.family.name
        );
        // Every declared series is rendered, with the family's type.
        let kind = match family.family.metric_type {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
        };
        assert!(text.contains(&format!("# TYPE {} {kind}", family.family.name)));
    }
}
