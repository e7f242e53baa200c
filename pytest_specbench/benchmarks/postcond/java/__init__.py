"""PostcondBench, Java side: JML ``ensures`` on a method of a Java project, checked
while the project's JUnit 4 tests run (correctness) and against mutants
(completeness), §3.2.2 and §3.2.4 of the paper."""
