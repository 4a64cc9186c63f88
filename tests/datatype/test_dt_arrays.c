#include "dt_ref.h"
int main(void) { return 0; }
