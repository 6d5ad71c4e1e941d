#version 450
// User clip planes through gl_ClipDistance plus a point-size output.
layout(location = 0) in vec3 a_pos;
layout(binding = 0) uniform Clip { mat4 mvp; vec4 planes[2]; } c;
out vec3 v_pos;
out gl_PerVertex { vec4 gl_Position; float gl_PointSize; float gl_ClipDistance[2]; };
void main() {
    vec4 p = vec4(a_pos, 1.0);
    gl_ClipDistance[0] = dot(p, c.planes[0]);
    gl_ClipDistance[1] = dot(p, c.planes[1]);
    gl_PointSize = 2.0;
    v_pos = a_pos;
    gl_Position = c.mvp * p;
}
