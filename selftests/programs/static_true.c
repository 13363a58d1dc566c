/* `sandpit bench`'s stripped static program: /bin/true, linked statically
 * and stripped (Makefile), so that the patcher finds no function starts
 * and decodes its code linearly unless the plan cache has its plan. */
int main(void)
{
	return 0;
}
