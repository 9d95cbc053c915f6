pub mod cli;
pub mod llm_server;
