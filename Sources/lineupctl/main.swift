import LineupctlTool

Tool.main(Array(CommandLine.arguments.dropFirst()))
