//! A call run in an instance made for it now (no instance was ready): a
//! fresh store and instance of the module's component, or of its on-demand
//! twin when the pool is full.

use super::blueprint::Blueprint;
use super::export::Request;
use super::instantiate::instantiate_anywhere;
use super::on_instance::{Clock, run_once};
use super::report::CallReport;
use crate::tool::StderrListener;

/// The call run in an instance made for it now, instantiation and call
/// under one deadline; its stderr also goes to `listener`, if given.
pub(super) async fn run_fresh(
    blueprint: &Blueprint,
    request: Request,
    listener: Option<&StderrListener>,
) -> CallReport {
    match instantiate_anywhere(blueprint, listener).await {
        Ok(made) => run_once(blueprint, made, request, Clock::Continue, ()).await,
        Err(report) => report,
    }
}
